// Custom dropdowns and sliders: a part of the form runtime (forms.js),
// spliced into it at its include line (see forms.go), so it shares the
// runtime's scope (its helpers, refs and click guard). It finds the
// options of an open dropdown (scrolling a list that renders only what is
// in view), reads back the choice a widget shows, and reads ARIA sliders.

  // A custom dropdown's options: those of the popup the combobox names
  // (aria-controls, aria-owns), else those inside it, else every visible
  // option on the page (a popup rendered at the end of the body).
  function optionsOf(el, parts) {
    if (parts && parts.option) return partEls(el, parts, "option");
    const own = popupOptions(el).own;
    if (own.some(visible)) return { els: own };
    const inside = optionsIn(el);
    if (inside.some(visible)) return { els: inside };
    return { els: optionsIn(doc) };
  }

  // popupOptions lists the options of the popups el names (aria-controls,
  // aria-owns), and whether one of them takes several choices.
  function popupOptions(el) {
    const own = [];
    let multi = false;
    for (const a of ["aria-controls", "aria-owns"]) {
      for (const id of (el.getAttribute(a) || "").split(/\s+/).filter(Boolean)) {
        const p = byId(el, id);
        if (!p) continue;
        own.push(...optionsIn(p));
        multi = multi || p.getAttribute("aria-multiselectable") === "true";
      }
    }
    return { own, multi };
  }

  // optionsIn lists the options in root: those in its tree and its open
  // shadow roots, and those slotted into it (a web component's options are
  // often its host's children, shown through a slot of its popup). An
  // option alone in a component's shadow tree (not a list's) stands for
  // that component: the host is what the page marks selected, and the
  // option's text is often slotted into it from the host's own children.
  function optionsIn(root) {
    const out = new Set();
    const add = (o) => {
      const h = hostOf(o);
      const alone = h && h !== root && !containsDeep(h, root) && deepAll("[role=option]", h.shadowRoot).length === 1 &&
        !deepAll("[role=listbox], [role=combobox]", h.shadowRoot).length;
      out.add(alone ? h : o);
    };
    const seen = new Set();
    const visit = (r) => {
      if (seen.has(r)) return;
      seen.add(r);
      for (const o of deepAll("[role=option]", r)) add(o);
      for (const s of deepAll("slot", r)) {
        for (const a of s.assignedElements({ flatten: true })) {
          if (a.matches("[role=option]")) add(a);
          else visit(a);
        }
      }
    };
    visit(root);
    return Array.from(out);
  }

  // picked reports an option that says it is selected.
  function picked(o) {
    if (o.getAttribute("aria-selected") === "true") return true;
    return !!o.shadowRoot && deepAll("[role=option][aria-selected=true]", o.shadowRoot).length > 0;
  }

  // filterField is the focused text field a dropdown filters its options
  // by, when there is one to type into: the combobox itself, a field in
  // it, or one next to its options (a search box atop the popup).
  function filterField(el, opts) {
    let a = doc.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    if (!a || a === doc.body || kindOf(a) !== "text" || a.readOnly || disabled(a)) return null;
    if (containsDeep(el, a)) return a;
    for (const o of opts) {
      let p = o;
      for (let i = 0; i < 4 && p; i++) {
        p = parentOf(p);
        if (p && containsDeep(p, a)) return a;
      }
    }
    return null;
  }

  // optionAt finds the visible option of an open dropdown whose text is
  // text and says where to click it, arming the check of where that
  // click lands. When none (or several) match and a filter field has
  // focus, it selects the field's text and answers {type: true} so the
  // caller types text there, unless it has already. When none matches and
  // the options sit in a list that scrolls (a virtualized list renders
  // only those in view), the list is scanned for it (see scanFor).
  async function optionAt(ref, text, parts, typed, scanId, budget) {
    const el = byRef(ref);
    if (!el) return fail("stale_ref", "the element is gone (the page navigated or re-rendered); resolve the target again");
    const until = global.performance.now() + Math.min(SCAN_SLICE, typeof budget === "number" ? budget : SCAN_SLICE);
    for (;;) {
      const { els, error } = optionsOf(el, parts);
      if (error) return error;
      const shown = els.filter((o) => visible(o) && !disabled(o));
      const hits = match(shown, (o) => [flatText(o), o.getAttribute("aria-label") || ""], text);
      if (hits.length !== 1 && !typed && !(parts && parts.option)) {
        const f = filterField(el, els.slice(0, 3));
        if (f) {
          if (typeof f.select === "function") f.select();
          return { ok: true, type: true };
        }
      }
      if (hits.length === 0 && typeof scanId === "string") {
        const step = await scanFor(shown, scanId);
        if (step === "end") return { ok: true, end: true };
        if (step === "moved" && global.performance.now() < until) continue;
        if (step === "moved") return fail("no_option", "the list is being scrolled to find the option", shown.slice(0, 10).map(describe));
      }
      if (hits.length === 0) return fail("no_option", shown.length ? "no visible option matches" : "no option is showing", shown.slice(0, 10).map(describe));
      if (hits.length > 1) return fail("ambiguous", hits.length + " options match", hits.map(describe));
      const at = await settleBox(hits[0], true, "strict");
      if (at.ok) armClick(hits[0], at.x, at.y);
      return at;
    }
  }

  // SCAN_SLICE bounds one optionAt call's scrolling (ms), as does the
  // caller's budget (what is left of its deadline), so the caller keeps
  // its deadline; the next call goes on where this one stopped.
  const SCAN_SLICE = 1500;

  // scrollerOf is the element that scrolls a list of options: the nearest
  // ancestor of an option whose content overflows it and that scrolls.
  function scrollerOf(opts) {
    const o = opts[0];
    for (let p = o && parentOf(o); p && p !== doc.body && p !== doc.documentElement; p = parentOf(p)) {
      if (p.scrollHeight > p.clientHeight + 1 && /auto|scroll/.test(global.getComputedStyle(p).overflowY)) return p;
    }
    return null;
  }

  // scan is the one list being searched by scrolling: from its top, a
  // view at a time, until the option shows or the list ends. A new
  // id (a Select call, a list opened again) starts a new scan.
  let scan = null;

  // scanFor moves the list holding opts on by one view: it scrolls its
  // scroller so the last option rendered comes to the top (a virtualized
  // list renders at least the options in view, often a few past it), then
  // waits until the list has rendered the options now in view. It
  // answers "moved", "end" (scrolled to the end already), or "none" (the
  // options do not scroll).
  async function scanFor(opts, id) {
    const sc = scrollerOf(opts);
    if (!sc) return "none";
    // A list scrolled by the page since (to its choice, once open) is
    // scanned again from its top.
    if (!scan || scan.id !== id || scan.scroller !== sc || Math.abs(sc.scrollTop - scan.at) > 1) {
      scan = { id, scroller: sc, at: 0 };
      if (sc.scrollTop > 0) {
        const was = optionTexts(sc);
        sc.scrollTop = 0;
        scan.at = sc.scrollTop;
        await rendered(sc, was);
        return "moved";
      }
    }
    const room = sc.scrollHeight - sc.clientHeight - sc.scrollTop;
    if (room <= 1) return "end";
    const view = sc.getBoundingClientRect().top + sc.clientTop;
    const last = opts.reduce((m, o) => Math.max(m, o.getBoundingClientRect().top), -Infinity);
    const by = last - view > sc.clientHeight / 2 ? last - view : sc.clientHeight;
    const was = optionTexts(sc);
    sc.scrollTop += Math.max(1, Math.floor(by));
    scan.at = sc.scrollTop;
    await rendered(sc, was);
    return "moved";
  }

  // rendered waits, a frame at a time (ten at most), until the options
  // in sc are no longer those it showed before a scroll (was): a list
  // renders on its scroll event, in that frame or a later one.
  async function rendered(sc, was) {
    for (let i = 0; i < 10; i++) {
      await nextFrame();
      if (optionTexts(sc) !== was) return;
    }
  }

  function optionTexts(sc) {
    return optionsIn(sc).map((o) => flatText(o)).join("\n");
  }

  // shownOf is the choice a custom dropdown shows: a listbox's selected
  // options; the option aria-activedescendant names when it is selected;
  // a closed combobox's own value; the selected options of the popup it
  // names; else the text shown in it or, for an input that is only the
  // widget's filter, in the few elements around it (a single-value
  // display), leaving out labels, popups, live regions and visually
  // hidden text.
  function shownOf(el) {
    if (roleOf(el) === "listbox") {
      // A collapsing listbox keeps its list next to the choice it shows:
      // what shows counts, and one choice shown twice is one.
      const sel = deepAll("[role=option][aria-selected=true]", el);
      const seen = sel.filter(visible);
      return Array.from(new Set((seen.length ? seen : sel).map((o) => flatText(o)))).join(", ");
    }
    const ad = el.getAttribute("aria-activedescendant");
    const active = ad && byId(el, ad);
    if (active && active.getAttribute("aria-selected") === "true") return flatText(active);
    if (el.tagName === "INPUT" && el.value && el.getAttribute("aria-expanded") !== "true") return el.value;
    // What the widget itself reports: the options of its popup that say
    // they are selected (a web component's options, a country list), read
    // once it is closed, or while it is open when it takes several.
    const pop = popupOptions(el);
    const chosen = pop.own.filter(picked);
    if (chosen.length && (pop.multi || el.getAttribute("aria-expanded") !== "true")) return chosen.map((o) => flatText(o)).join(", ");
    if (el.getAttribute("aria-expanded") !== "true") {
      // A closed widget that shows its choice as a selected option of its
      // own (Choices.js): the options a person sees selected.
      const sel = deepAll("[role=option][aria-selected=true]", el).filter((o) => visible(o) && !srOnly(o));
      if (sel.length) return sel.map((o) => flatText(o)).join(", ");
    }
    const skip = (e) => e === el || e.matches("label, [role=listbox], [role=option], [aria-live], script, style, template") ||
      !visible(e) || srOnly(e);
    const text = (n) => {
      let out = "";
      const walk = (p) => {
        let kids = p.childNodes;
        if (p.nodeType === 1 && p.shadowRoot) kids = p.shadowRoot.childNodes;
        else if (p.nodeType === 1 && p.tagName === "SLOT" && p.assignedNodes().length) kids = p.assignedNodes();
        for (const c of kids) {
          if (c.nodeType === 3) out += c.data + " ";
          else if (c.nodeType === 1 && !skip(c) && !c.matches("input, select, textarea")) walk(c);
        }
      };
      walk(n);
      return norm(out);
    };
    let n = el;
    for (let i = 0; i < 3 && n; i++) {
      const t = text(n);
      if (t) return t;
      n = parentOf(n);
      if (!n || n === doc.body || Array.from(n.querySelectorAll(CONTROLS)).some((f) => f !== el && !el.contains(f) && !f.matches("[role=option]") && FIELD(f) && visible(f))) break;
    }
    return "";
  }

  function shown(ref, parts) {
    return withEl(ref, (el) => {
      if (parts && parts.value) {
        const { els, error } = partEls(el, parts, "value");
        if (error) return error;
        if (els.length) {
          const v = els[0];
          return { ok: true, value: v.tagName === "INPUT" && v.value ? v.value : flatText(v) };
        }
      }
      return { ok: true, value: shownOf(el), expanded: el.getAttribute("aria-expanded") === "true" };
    });
  }

  // sliderOf reads an ARIA slider that is no input (a div with role
  // slider): its value, bounds (the ARIA defaults when unset) and
  // orientation. With focus set it is focused first, for the keys.
  function sliderOf(ref, focus) {
    return withEl(ref, (el) => {
      if (roleOf(el) !== "slider" || el.tagName === "INPUT") return fail("not_editable", "not an ARIA slider", [describe(el)]);
      if (focus) {
        el.focus({ preventScroll: true });
        if (!focusedIn(el)) return fail("not_focusable", "the slider did not take focus", [describe(el)]);
      }
      const num = (a, d) => {
        const v = el.getAttribute(a);
        return v === null || v.trim() === "" || !isFinite(Number(v)) ? d : Number(v);
      };
      return { ok: true, now: num("aria-valuenow", null), min: num("aria-valuemin", 0), max: num("aria-valuemax", 100),
        text: norm(el.getAttribute("aria-valuetext")), vertical: el.getAttribute("aria-orientation") === "vertical" };
    });
  }
