// The form runtime. It runs in the isolated world "tranquil-sdk": it shares
// the page's DOM but none of its JavaScript, so a page that replaced
// built-ins changes nothing here. It is built once per document by the
// wrapper in forms.go and keeps the elements it found behind ref strings.
// Every method returns plain JSON: {ok: true, ...} or
// {ok: false, code, message, candidates?}.
(function (global) {
  "use strict";
  const doc = global.document;
  const rnd = new Uint32Array(2);
  global.crypto.getRandomValues(rnd);
  const docId = rnd[0].toString(36) + rnd[1].toString(36);
  const refs = new Map();
  let seq = 0;

  const CONTROLS = 'input:not([type=hidden]), textarea, select, button, [contenteditable=""], [contenteditable="true"], ' +
    '[role=textbox], [role=combobox], [role=checkbox], [role=radio], [role=switch], [role=listbox], [role=spinbutton], [role=slider]';
  const TEXT_TYPES = new Set(["", "text", "email", "password", "search", "tel", "url", "number", "date", "datetime-local", "month", "time", "week"]);

  const fail = (code, message, candidates) => ({ ok: false, code, message, candidates });
  const norm = (s) => String(s == null ? "" : s).replace(/\s+/g, " ").trim();
  const low = (s) => norm(s).toLowerCase();

  function refOf(el) {
    for (const [r, e] of refs) if (e === el) return r;
    const r = docId + ":" + (++seq);
    refs.set(r, el);
    return r;
  }

  function byRef(ref) {
    if (typeof ref !== "string" || !ref.startsWith(docId + ":")) return null;
    const el = refs.get(ref);
    if (!el || !el.isConnected) { refs.delete(ref); return null; }
    return el;
  }

  function withEl(ref, f) {
    const el = byRef(ref);
    if (!el) return fail("stale_ref", "the element is gone (the page navigated or re-rendered); resolve the target again");
    return f(el);
  }

  function visible(el) {
    if (typeof el.checkVisibility === "function") {
      if (!el.checkVisibility({ visibilityProperty: true })) return false;
    } else if (el.getClientRects().length === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }

  function disabled(el) {
    return (el.matches && el.matches(":disabled")) || el.getAttribute("aria-disabled") === "true";
  }

  // Open shadow roots are searched as part of the page: deepAll matches sel
  // inside each tree (the document, then every open shadow root) on its
  // own, so no combinator crosses a shadow boundary, and lists a host's
  // shadow tree right after the host. Closed roots cannot be seen from
  // script; the accessibility tree reaches them.
  function deepAll(sel, root) {
    const out = [];
    const visit = (r) => {
      const hits = sel === "*" ? null : new Set(r.querySelectorAll(sel));
      for (const e of r.querySelectorAll("*")) {
        if (!hits || hits.has(e)) out.push(e);
        if (e.shadowRoot) visit(e.shadowRoot);
      }
    };
    if (root && root.shadowRoot) visit(root.shadowRoot);
    visit(root || doc);
    return out;
  }

  // hostOf is the shadow host of el's tree, or null in the document.
  function hostOf(el) {
    const r = el.getRootNode();
    return r && r.host ? r.host : null;
  }

  // parentOf steps out of a shadow root to its host.
  function parentOf(el) {
    return el.parentElement || hostOf(el);
  }

  function containsDeep(a, b) {
    for (let n = b; n; n = parentOf(n)) if (n === a) return true;
    return false;
  }

  // flatText is the text a person sees in node: a slot shows what is
  // assigned to it (or its fallback), an open shadow host its shadow tree.
  // Controls inside (a wrapping label holds its input, a select its
  // options) and skip are left out.
  function flatText(node, skip) {
    let out = "";
    const walk = (n) => {
      let kids = n.childNodes;
      if (n.nodeType === 1 && n.shadowRoot) kids = n.shadowRoot.childNodes;
      else if (n.nodeType === 1 && n.tagName === "SLOT") {
        const a = n.assignedNodes();
        if (a.length) kids = a;
      }
      for (const c of kids) {
        if (c.nodeType === 3) out += c.data + " ";
        else if (c.nodeType === 1 && c !== skip && !c.matches("input, select, textarea, button, script, style, template")) walk(c);
      }
    };
    walk(node);
    return norm(out);
  }

  // byId finds an id in el's own tree first (a shadow root has its own
  // ids), then in the document.
  function byId(el, id) {
    const r = el && el.getRootNode();
    return (r && r !== doc && typeof r.getElementById === "function" && r.getElementById(id)) || doc.getElementById(id);
  }

  function idsText(el, list) {
    return norm(String(list || "").split(/\s+/).filter(Boolean)
      .map((id) => { const e = byId(el, id); return e ? flatText(e) : ""; }).join(" "));
  }

  const FIELD = (e) => !e.matches("button, input[type=button], input[type=submit], input[type=reset], input[type=image]");

  // fieldsIn lists the fields of a component's shadow tree (open roots
  // only), leaving out its buttons (clear, show password, …).
  function fieldsIn(host) {
    return host.shadowRoot ? deepAll(CONTROLS, host.shadowRoot).filter(FIELD) : [];
  }

  function labelsOf(el) {
    const out = [];
    const seen = new Set();
    const add = (l) => { if (l && !seen.has(l)) { seen.add(l); out.push(flatText(l, el)); } };
    const named = (e) => {
      if (e.labels) for (const l of e.labels) add(l);
      add(e.closest("label"));
      if (e.hasAttribute("aria-label")) out.push(norm(e.getAttribute("aria-label")));
      if (e.hasAttribute("aria-labelledby")) out.push(idsText(e, e.getAttribute("aria-labelledby")));
    };
    named(el);
    // A component whose shadow tree holds this one field is labelled for
    // it: <label for> naming the host, a label around the host, and a
    // <label> (or an element for a slot named like "label") the page put
    // into the component.
    for (let h = hostOf(el), inner = el; h; inner = h, h = hostOf(h)) {
      const fields = fieldsIn(h);
      if (fields.length !== 1 || (fields[0] !== el && fields[0] !== inner)) break;
      named(h);
      if (h.id) {
        const r = h.getRootNode();
        for (const l of r.querySelectorAll("label[for]")) if (l.htmlFor === h.id) add(l);
      }
      for (const c of h.children) {
        if (c.tagName === "LABEL" || /label/i.test(c.getAttribute("slot") || "")) add(c);
      }
    }
    return out.filter(Boolean);
  }

  function implicitRole(el) {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    switch (tag) {
      case "button": return "button";
      case "a": return el.hasAttribute("href") ? "link" : "";
      case "textarea": return "textbox";
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
      case "img": return "img";
      case "input":
        if (["button", "submit", "reset", "image"].includes(type)) return "button";
        if (type === "checkbox") return "checkbox";
        if (type === "radio") return "radio";
        if (type === "range") return "slider";
        if (type === "number") return "spinbutton";
        if (type === "search") return el.hasAttribute("list") ? "combobox" : "searchbox";
        if (TEXT_TYPES.has(type)) return el.hasAttribute("list") ? "combobox" : "textbox";
        return "";
    }
    return "";
  }

  function roleOf(el) {
    const r = el.getAttribute("role");
    return r ? r.trim().split(/\s+/)[0].toLowerCase() : implicitRole(el);
  }

  function accessibleName(el) {
    if (el.hasAttribute("aria-labelledby")) return idsText(el, el.getAttribute("aria-labelledby"));
    if (el.hasAttribute("aria-label")) return norm(el.getAttribute("aria-label"));
    const labels = labelsOf(el);
    if (labels.length) return labels[0];
    const tag = el.tagName.toLowerCase();
    if (tag === "input" && ["button", "submit", "reset"].includes((el.type || "").toLowerCase())) return norm(el.value);
    if (tag === "img") return norm(el.getAttribute("alt"));
    const role = roleOf(el);
    if (["button", "link", "heading", "tab", "menuitem", "option", "checkbox", "radio", "switch", "cell"].includes(role)) {
      return flatText(el);
    }
    return norm(el.getAttribute("title") || el.getAttribute("placeholder") || "");
  }

  // Whole matches win over substring matches, both ignoring case; with
  // whole set, only whole, case-sensitive matches count.
  function match(els, textsOf, want, whole) {
    if (whole) {
      const w = norm(want);
      return els.filter((el) => textsOf(el).some((t) => norm(t) === w));
    }
    const w = low(want);
    const exact = [], partial = [];
    for (const el of els) {
      const texts = textsOf(el).map(low);
      if (texts.some((t) => t === w)) exact.push(el);
      else if (w && texts.some((t) => t.includes(w))) partial.push(el);
    }
    return exact.length ? exact : partial;
  }

  function deepest(els) {
    const set = new Set(els);
    return els.filter((el) => !els.some((o) => o !== el && set.has(o) && el.contains(o)));
  }

  function describe(el) {
    const d = { tag: el.tagName.toLowerCase() };
    if (el.id) d.id = el.id;
    const name = el.getAttribute("name");
    if (name) d.name = name;
    if (el.type && el.tagName === "INPUT") d.type = el.type;
    const label = labelsOf(el)[0];
    if (label) d.label = label.slice(0, 80);
    const text = norm(el.textContent).slice(0, 80);
    if (text && !label) d.text = text;
    if (!visible(el)) d.hidden = true;
    if (disabled(el)) d.disabled = true;
    return d;
  }

  function kindOf(el) {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (tag === "input") {
      if (type === "checkbox") return "checkbox";
      if (type === "radio") return "radio";
      if (TEXT_TYPES.has(type)) return "text";
      return "other";
    }
    if (tag === "textarea" || el.isContentEditable) return "text";
    if (tag === "select") return "select";
    const role = roleOf(el);
    if (role === "textbox") return "text";
    if (role === "checkbox" || role === "switch") return "checkbox";
    if (role === "radio") return "radio";
    return "other";
  }

  function find(target) {
    if (!target || typeof target !== "object") return { error: fail("bad_target", "target must be an object") };
    const all = () => deepAll(CONTROLS);
    const exact = target.exact === true;
    if (typeof target.ref === "string") {
      const el = byRef(target.ref);
      return el ? { els: [el] } : { error: fail("stale_ref", "the element is gone (the page navigated or re-rendered); resolve the target again") };
    }
    if (typeof target.selector === "string") {
      try { return { els: deepAll(target.selector) }; }
      catch (e) { return { error: fail("bad_target", "invalid selector: " + e.message) }; }
    }
    if (typeof target.testId === "string") {
      return { els: deepAll("[data-testid]").filter((e) => e.getAttribute("data-testid") === target.testId) };
    }
    if (typeof target.label === "string") {
      // A segmented field's label names its group (one walk of the page
      // finds both).
      const els = deepAll(CONTROLS + ", [role=group]").filter((e) => e.getAttribute("role") !== "group" || segmentsIn(e).length);
      return { els: match(els, labelsOf, target.label, exact) };
    }
    if (typeof target.placeholder === "string") {
      return { els: match(deepAll("[placeholder]"), (e) => [e.getAttribute("placeholder")], target.placeholder) };
    }
    if (typeof target.role === "string") {
      const role = target.role.toLowerCase();
      const els = deepAll("*").filter((e) => roleOf(e) === role);
      if (typeof target.name !== "string") return { els };
      return { els: match(els, (e) => [accessibleName(e)], target.name, exact) };
    }
    if (typeof target.name === "string") {
      return { els: deepAll("[name]").filter((e) => e.getAttribute("name") === target.name) };
    }
    if (typeof target.text === "string") {
      const els = doc.body ? deepAll("*", doc.body).filter((e) => !e.matches("script, style, template")) : [];
      return { els: deepest(match(els, (e) => [e.textContent], target.text)) };
    }
    return { error: fail("bad_target", "target names no way to find the element") };
  }

  function resolve(target) {
    const { els, error } = find(target);
    if (error) return error;
    return pick(els);
  }

  // Sets: the elements one step of a lookup found (a target's matches, a
  // scope's, a filter's), kept under a token for the lookup's next step
  // and dropped when the lookup ends. A few hundred are kept at most, so a
  // lookup that never ended cannot hold elements for long.
  const sets = new Map();
  let setSeq = 0;

  function keep(els, total) {
    const set = "s" + (++setSeq);
    if (typeof total === "number" && total > els.length) els.total = total;
    sets.set(set, els);
    if (sets.size > 256) sets.delete(sets.keys().next().value);
    return { ok: true, set, n: typeof total === "number" && total > els.length ? total : els.length };
  }

  const lost = () => fail("stale_ref", "the page changed while the target was looked up; try again");

  // inside keeps the elements strictly inside an element of the scope set
  // (through open shadow roots), or with self, also the scope elements
  // themselves; no scope keeps them all.
  function inside(els, scope, self) {
    if (!scope) return els;
    const scopes = sets.get(scope);
    if (!scopes) return null;
    return els.filter((e) => scopes.some((s) => (self || s !== e) && containsDeep(s, e)));
  }

  // under reports whether e of set els counts as inside r of the set
  // named root: as the lookup that made els found it there (a selector's
  // match under one scope element, an nth's pick in one element), or when
  // els was made otherwise, by where it is. A text match counts in
  // itself, as Playwright's getByText takes the element it is chained on.
  function under(els, e, r, root) {
    if (els.under && els.scope === root) return els.under.get(e).has(r);
    return (els.self || e !== r) && containsDeep(r, e);
  }

  // splitList splits a selector list at its top-level commas.
  function splitList(sel) {
    const parts = [];
    let depth = 0, quote = "", start = 0;
    for (let i = 0; i < sel.length; i++) {
      const c = sel[i];
      if (quote) { if (c === "\\") i++; else if (c === quote) quote = ""; continue; }
      if (c === "\\") i++;
      else if (c === '"' || c === "'") quote = c;
      else if (c === "(" || c === "[") depth++;
      else if (c === ")" || c === "]") depth--;
      else if (c === "," && depth === 0) { parts.push(sel.slice(start, i)); start = i + 1; }
    }
    parts.push(sel.slice(start));
    return parts;
  }

  // scopedSelectorSet is a selector's matches inside each element of the
  // scope set, the whole selector matched inside it, as Playwright chains
  // locator(css): "div > span" inside a div finds the spans of the divs
  // within it, never its own. A shadow tree inside the scope is matched
  // on its own, as everywhere. The set records which scope elements each
  // match was found under.
  function scopedSelectorSet(sel, scope) {
    const scopes = sets.get(scope);
    if (!scopes) return lost();
    const found = new Map();
    try {
      const parts = splitList(sel).map((p) => ":scope " + p.trim());
      for (const s of scopes) {
        const own = new Set();
        for (const p of parts) for (const e of s.querySelectorAll(p)) own.add(e);
        const tree = s.getRootNode();
        for (const e of deepAll(sel, s)) {
          if (e === s || (e.getRootNode() === tree && !own.has(e))) continue;
          if (!found.has(e)) found.set(e, new Set());
          found.get(e).add(s);
        }
      }
    } catch (e) {
      return fail("bad_target", "invalid selector: " + e.message);
    }
    const els = order(Array.from(found.keys()));
    els.under = found;
    els.scope = scope;
    return keep(els);
  }

  // order sorts elements the way deepAll lists them: document order, a
  // host's shadow tree right after the host.
  function order(els) {
    const index = new Map();
    const key = (el) => {
      const k = [];
      for (let n = el; n && n !== doc;) {
        const p = n.parentNode;
        if (!p) break;
        if (p.nodeType === 11 && p.host) { k.push(-1); n = p.host; continue; }
        let ix = index.get(p);
        if (!ix) { ix = new Map(); Array.from(p.childNodes).forEach((c, i) => ix.set(c, i)); index.set(p, ix); }
        k.push(ix.get(n));
        n = p;
      }
      return k.reverse();
    };
    const keys = new Map(els.map((e) => [e, key(e)]));
    return els.slice().sort((a, b) => {
      const ka = keys.get(a), kb = keys.get(b);
      for (let i = 0; i < Math.min(ka.length, kb.length); i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
      return ka.length - kb.length;
    });
  }

  // findSet is find's matches inside scope, kept.
  function findSet(target, scope) {
    if (scope && target && typeof target.selector === "string") return scopedSelectorSet(target.selector, scope);
    const { els, error } = find(target);
    if (error) return error;
    const text = typeof target.text === "string";
    const kept = inside(els, scope, text);
    if (!kept) return lost();
    kept.self = text;
    return keep(kept);
  }

  // adoptSet keeps elements found elsewhere (the accessibility tree), in
  // document order, inside scope; total is how many matched when only
  // some were passed.
  function adoptSet(els, opts) {
    if (!Array.isArray(els) || !els.every((e) => e && (e.nodeType === 1 || e.nodeType === 9))) return fail("bad_target", "adoptSet takes an array of elements");
    // The tree's document node is the Document: its element stands for it.
    els = els.map((e) => e.nodeType === 9 ? e.documentElement : e).filter(Boolean);
    const { scope, total } = opts || {};
    const kept = inside(order(Array.from(new Set(els))), scope);
    return kept ? keep(kept, scope ? undefined : total) : lost();
  }

  // deepText is all the text inside el, open shadow trees and slotted
  // content included, with runs of white space made one space.
  function deepText(el) {
    let out = "";
    const walk = (n) => {
      let kids = n.childNodes;
      if (n.nodeType === 1 && n.shadowRoot) kids = Array.from(n.shadowRoot.childNodes).concat(Array.from(n.childNodes).filter((c) => !c.assignedSlot));
      for (const c of kids) {
        if (c.nodeType === 3) out += c.data + " ";
        else if (c.nodeType === 1 && !c.matches("script, style, template")) walk(c);
      }
    };
    walk(el);
    return norm(out);
  }

  // narrowSet keeps the elements of set whose text holds hasText (ignoring
  // case and runs of white space) and that hold an element of the has set.
  // When it keeps none of a few (3 at most), near describes them, for the
  // miss to name.
  function narrowSet(set, hasText, has) {
    const before = sets.get(set);
    let els = before;
    if (!els) return lost();
    if (hasText) {
      const w = low(hasText);
      els = els.filter((e) => deepText(e).toLowerCase().includes(w));
    }
    if (has) {
      const inner = sets.get(has);
      if (!inner) return lost();
      els = els.filter((e) => inner.some((i) => under(inner, i, e, set)));
    }
    const kept = keep(els);
    if (els.length === 0 && before.length <= 3) kept.near = before.map(describe);
    return kept;
  }

  // nthSet keeps the nth element of set (0 the first, -1 the last). With
  // root, it keeps the nth of those inside each element of the root set:
  // the nth of a filter's inner target counts in each match it filters.
  // of is how many it picked from (inside the root element holding the
  // most).
  function nthSet(set, nth, root) {
    const els = sets.get(set);
    if (!els) return lost();
    const at = (list) => list[nth < 0 ? list.length + nth : nth];
    if (!root) {
      const e = at(els);
      return Object.assign(keep(e ? [e] : []), { of: els.length });
    }
    const roots = sets.get(root);
    if (!roots) return lost();
    // Each pick counts as inside the root element it was picked in only.
    const picked = new Map();
    let most = 0;
    for (const r of roots) {
      const inner = els.filter((e) => under(els, e, r, root));
      most = Math.max(most, inner.length);
      const e = at(inner);
      if (e) {
        if (!picked.has(e)) picked.set(e, new Set());
        picked.get(e).add(r);
      }
    }
    const kept = els.filter((e) => picked.has(e));
    kept.under = picked;
    kept.scope = root;
    return Object.assign(keep(kept), { of: most });
  }

  // setElements hands a set to the caller as an array of elements.
  function setElements(set) {
    return sets.get(set) || [];
  }

  function dropSets(list) {
    for (const s of list || []) sets.delete(s);
    return { ok: true };
  }

  // pickSet picks from a set as resolve does, or, with any, as pickAnyOf
  // does; nth picks that match (0 the first, -1 the last) and only it.
  // It drops the sets of drop, the lookup's last step done.
  function pickSet(set, nth, any, drop) {
    const els = sets.get(set);
    dropSets(drop);
    if (!els) return lost();
    if (typeof nth === "number") {
      const i = nth < 0 ? els.length + nth : nth;
      if (i < 0 || i >= els.length) {
        return fail("not_found", "nth " + nth + " is past the " + els.length + (els.length === 1 ? " element that matches" : " elements that match"), els.slice(0, 5).map(describe));
      }
      return any ? pickAnyOf([els[i]]) : pick([els[i]]);
    }
    return any ? pickAnyOf(els) : pick(els, els.total);
  }

  // srOnly reports an element hidden the way screen-reader-only text is: a
  // box of a pixel or two, or clipped away.
  function srOnly(el) {
    const r = el.getBoundingClientRect();
    if (r.width <= 2 && r.height <= 2) return true;
    const cs = global.getComputedStyle(el);
    return cs.clipPath === "inset(50%)" || (cs.position === "absolute" && /^rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)$/.test(cs.clip));
  }

  // widgetFor is the combobox a component library shows in place of a
  // native select it hid: Choices.js keeps the select inside its widget
  // (where the select is the widget's, however its styles show it), Tom
  // Select and Select2 put theirs right after it.
  function widgetFor(el) {
    if (el.tagName !== "SELECT") return null;
    const up = el.parentElement && el.parentElement.closest("[role=combobox], [role=listbox]");
    if (up && visible(up)) return up;
    if (visible(el) && !srOnly(el)) return null;
    const next = el.nextElementSibling;
    if (!next) return null;
    const ws = (next.matches("[role=combobox], [role=listbox]") ? [next] : Array.from(next.querySelectorAll("[role=combobox], [role=listbox]"))).filter(visible);
    return ws.length === 1 ? ws[0] : null;
  }

  // passLabel is the label a click goes to for a checkbox or radio that
  // takes no pointer itself (a box of nothing, visually hidden,
  // pointer-events none: a switch drawn by its label) while a label of
  // its shows. A person clicks the label; the state is the input's. An input
  // that is not rendered at all (display: none) has none.
  function passLabel(el) {
    if (el.tagName !== "INPUT" || !/^(checkbox|radio)$/i.test(el.type) || !el.labels || !el.labels.length) return null;
    if (typeof el.checkVisibility === "function" ? !el.checkVisibility() : el.getClientRects().length === 0) return null;
    if (visible(el) && !srOnly(el) && global.getComputedStyle(el).pointerEvents !== "none") return null;
    return Array.from(el.labels).find(visible) || null;
  }

  // passFace is what a person clicks for a combobox input that takes no
  // pointer itself (transparent, pointer-events none, or drawn at no
  // size: react-select without search keeps such an input in its
  // control): the element the pointer meets at the input's point when
  // that is part of the widget, else the nearest shown box around the
  // input. The choice is still read from the combobox.
  function passFace(el) {
    if (el.tagName !== "INPUT" || !comboOf(el)) return null;
    const cs = global.getComputedStyle(el);
    if (!srOnly(el) && cs.pointerEvents !== "none" && Number(cs.opacity) !== 0) return null;
    let box = parentOf(el);
    while (box && box.nodeType === 1 && !(visible(box) && !srOnly(box))) box = parentOf(box);
    if (!box || box.nodeType !== 1 || box === doc.body || box === doc.documentElement) return null;
    const b = el.getBoundingClientRect();
    const x = b.x + b.width / 2, y = b.y + b.height / 2;
    const hit = deepHit(hitAt(el, x, y), x, y);
    return hit && hit !== el && containsDeep(box, hit) && visible(hit) ? hit : box;
  }

  // pick takes the one usable element of found; total is how many
  // matched when found holds only some of them.
  function pick(found, total) {
    if (found.length === 0) return fail("not_found", "no element matches");
    const els = [];
    for (const e of found) {
      const w = widgetFor(e) || segmentedFor(e) || e;
      if (!els.includes(w)) els.push(w);
    }
    let usable = els.filter((e) => (visible(e) || passLabel(e)) && !disabled(e));
    const skipped = els.filter((e) => !usable.includes(e)).map(describe);
    const field = oneSegmented(usable);
    if (field) usable = [field];
    if (usable.length === 0) {
      const code = els.some((e) => visible(e)) ? "disabled" : "hidden";
      return fail(code, els.length === 1 ? "the only match is " + code : "every match is hidden or disabled", els.map(describe));
    }
    if (usable.length > 1) {
      const n = Math.max(usable.length, total || 0);
      return fail("ambiguous", n + " elements match; narrow the target (within, hasText, has) or pick one with nth", usable.slice(0, 10).map(describe));
    }
    const el = usable[0];
    return { ok: true, ref: refOf(el), kind: kindOf(el), element: describe(el), skipped };
  }

  // Actionability: an action runs once its target is attached, visible,
  // enabled (and editable, to type into), stable and, for the pointer, the
  // element a click at its centre lands on. actionable checks all that in
  // one call; the caller polls it until the target is ready or its
  // deadline passes, so each failure here is a reason to wait.

  // A page that is not rendering runs no animation frames; a timer stands
  // in for the frame so a check never hangs on one. nextFrame resolves
  // true after a frame, false after the timer.
  function nextFrame() {
    return new Promise((resolve) => {
      let done = false;
      const go = (framed) => { if (!done) { done = true; resolve(framed); } };
      global.requestAnimationFrame(() => go(true));
      global.setTimeout(() => go(false), 100);
    });
  }

  // moving reports a running animation or transition on el or an element
  // around it, which can move el with nothing in the DOM changing.
  function moving(el) {
    for (const a of doc.getAnimations()) {
      const t = a.playState === "running" && a.effect && a.effect.target;
      if (t && containsDeep(t, el)) return true;
    }
    return false;
  }

  function boxOf(el) {
    const r = el.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  }

  const sameBox = (a, b) => a.x === b.x && a.y === b.y && a.w === b.w && a.h === b.h;

  function inView(b) {
    return b.x >= 0 && b.y >= 0 && b.x + b.w <= global.innerWidth && b.y + b.h <= global.innerHeight;
  }

  // centre is the middle of the part of the box inside the viewport.
  function centre(b) {
    const l = Math.max(b.x, 0), t = Math.max(b.y, 0);
    const r = Math.min(b.x + b.w, global.innerWidth), btm = Math.min(b.y + b.h, global.innerHeight);
    return { x: (l + Math.min(Math.max(r, l), global.innerWidth)) / 2, y: (t + Math.min(Math.max(btm, t), global.innerHeight)) / 2 };
  }

  // hitAt is the topmost element at (x, y) as el's own tree sees it: a
  // shadow root's elementsFromPoint retargets hits in deeper trees to
  // their hosts there, and reports elements of outer trees as they are.
  function hitAt(el, x, y) {
    const root = el.getRootNode();
    const scope = root !== doc && typeof root.elementsFromPoint === "function" ? root : doc;
    return scope.elementsFromPoint(x, y)[0] || null;
  }

  // deepHit follows a hit down through open shadow roots, to name what
  // covers a target.
  function deepHit(hit, x, y) {
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementsFromPoint(x, y)[0];
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  // coverAt is what a click at (x, y) lands on instead of el, or null when
  // el gets it: el itself, something inside it, one of its labels, or the
  // shadow host el is slotted into (the host's own rendering around it).
  // With near set (typing, native selects: no click is sent), things in
  // the few elements around el that hold no other field count as part of
  // it too (a floating label, a mask, an icon), so only an overlay from
  // elsewhere on the page covers it.
  function coverAt(el, x, y, near) {
    const hit = hitAt(el, x, y);
    if (!hit) return doc.documentElement;
    if (hit === el || el.contains(hit)) return null;
    if (el.labels && Array.from(el.labels).some((l) => l.contains(hit))) return null;
    if (hit.contains(el) && (hit.shadowRoot || hit.tagName.includes("-"))) return null;
    if (near) {
      let a = el;
      for (let i = 0; i < 3; i++) {
        a = parentOf(a);
        if (!a || a === doc.body || a === doc.documentElement) break;
        if (Array.from(a.querySelectorAll(CONTROLS)).some((f) => f !== el && !el.contains(f) && FIELD(f))) break;
        if (containsDeep(a, hit)) return null;
      }
    }
    return deepHit(hit, x, y);
  }

  // settleBox scrolls el into view when it is not, waits for it to hold
  // still, and returns where a click lands, or why it cannot yet. frames
  // compares its box across an animation frame; otherwise a frame is
  // waited only while an animation runs on it or around it.
  async function settleBox(el, frames, hit, at) {
    let b = boxOf(el);
    if (!inView(b)) {
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      b = boxOf(el);
    }
    if (clipped(el, b)) {
      // Inside the window but outside its scroller's view (an option
      // below a list's fold): only the scrollers move, as little as
      // needed. A virtualized list may render the element anew.
      el.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
      if (!el.isConnected) return fail("not_found", "the element was re-rendered as its list scrolled");
      b = boxOf(el);
    }
    if (frames || moving(el)) {
      const framed = await nextFrame();
      if (!el.isConnected) return fail("not_found", "the element was removed");
      // Animations advance with rendered frames: with none rendered, an
      // unchanged box says nothing about an animation still running.
      if (!framed && moving(el)) return fail("not_stable", "the element is animating", [describe(el)]);
      const now = boxOf(el);
      if (!sameBox(b, now)) return fail("not_stable", "the element is moving", [describe(el)]);
      if (!visible(el)) return fail("hidden", "the element was hidden", [describe(el)]);
      if (disabled(el)) return fail("disabled", "the element was disabled", [describe(el)]);
    }
    // A position is a point of the element's box, from its top left
    // corner, as Playwright's click({ position }) takes it.
    const p = at ? { x: b.x + at.x, y: b.y + at.y } : centre(b);
    if (hit) {
      const cover = coverAt(el, p.x, p.y, hit === "near");
      if (cover) return fail("obscured", "another element covers it", [describe(cover)]);
    }
    return { ok: true, x: p.x, y: p.y };
  }

  // clipped reports whether a scrolling ancestor of el (overflow other
  // than visible) shows only part of box b, or none of it.
  function clipped(el, b) {
    for (let p = parentOf(el); p && p !== doc.body && p !== doc.documentElement; p = parentOf(p)) {
      const cs = global.getComputedStyle(p);
      if (cs.overflowX === "visible" && cs.overflowY === "visible") continue;
      if (p.scrollHeight <= p.clientHeight + 1 && p.scrollWidth <= p.clientWidth + 1) continue; // nothing to scroll to
      const r = p.getBoundingClientRect();
      const top = r.top + p.clientTop, left = r.left + p.clientLeft;
      if (b.y < top - 1 || b.x < left - 1 || b.y + b.h > top + p.clientHeight + 1 || b.x + b.w > left + p.clientWidth + 1) return true;
    }
    return false;
  }

  // SET_TYPES are inputs Chromium gives a picker rather than free text
  // (typing into a date field is ignored): their value is set the way the
  // picker sets it.
  const SET_TYPES = new Set(["date", "time", "datetime-local", "month", "week", "color", "range"]);

  function inputType(el) {
    return el.tagName === "INPUT" ? (el.getAttribute("type") || "").toLowerCase() : "";
  }

  // takesText: fields fill types into or sets.
  function takesText(el) {
    return kindOf(el) === "text" || SET_TYPES.has(inputType(el)) || el.isContentEditable;
  }

  // comboOf is the ARIA combobox or listbox el is (a custom dropdown).
  // A trigger whose popup holds options (a country picker's button that
  // opens a dialog with a search box and a list) is one too.
  function comboOf(el) {
    const role = roleOf(el);
    if (role === "combobox" || role === "listbox") return role;
    const pop = (el.getAttribute("aria-haspopup") || "").toLowerCase();
    if (pop === "listbox" || (pop === "true" && role === "button")) return "combobox";
    return pop && pop !== "false" && popupOptions(el).own.length ? "combobox" : "";
  }

  // actionable finds target and checks it is ready for act:
  //   fill    a field that takes text, not read-only; with value set (not a
  //           dry run) it is also focused and selected, or, for a picker
  //           input, given the value;
  //   check   a checkbox or radio, stable and under the pointer, unless it
  //           already is in the state wanted;
  //   select  a native select (with options set, they are chosen), an ARIA
  //           combobox or listbox, or, with parts, the parts' trigger;
  //   click   anything stable and under the pointer.
  async function actionable(target, need) {
    const r = resolve(target);
    if (!r.ok) return r;
    const el = byRef(r.ref);
    need = need || {};
    let ready;
    switch (need.act) {
      case "fill":
        if (!takesText(el)) return fail("not_editable", "the element does not take text", [r.element]);
        if (!el.isContentEditable && (el.readOnly || el.getAttribute("aria-readonly") === "true")) return fail("readonly", "the field is read-only", [r.element]);
        // A picker input's value is set, not typed or clicked: what
        // covers it (the custom slider drawn over a hidden range) is no
        // reason to wait.
        ready = await settleBox(el, false, SET_TYPES.has(inputType(el)) ? null : "near");
        if (!ready.ok) return ready;
        if (typeof need.value === "string") {
          const p = fillPrepare(el, need.value);
          if (!p.ok) return p;
          Object.assign(r, p);
        }
        break;
      case "check": {
        if (r.kind !== "checkbox" && r.kind !== "radio") return fail("bad_target", "not a checkbox or radio", [r.element]);
        r.checked = valueOf(el) === true;
        if (typeof need.checked === "boolean" && r.checked === need.checked) return r;
        ready = await settleBox(passLabel(el) || el, true, "strict");
        break;
      }
      case "select":
        if (need.parts) {
          const c = checkPartsOf(el, need.parts);
          if (!c.ok) return c;
          r.mode = "parts";
          const trig = c.trigger || el;
          ready = await settleBox(trig, true, "strict");
        } else if (el.tagName === "SELECT") {
          r.mode = "native";
          ready = await settleBox(el, false, "near");
          if (ready.ok && Array.isArray(need.options)) {
            const s = chooseOptions(el, need.options, need.multiple === true, need.dry === true);
            if (!s.ok) return s;
            Object.assign(r, s);
          }
        } else if (el.tagName === "INPUT" && el.list) {
          // A datalist's suggestions are drawn by the browser, not the
          // page: the choice is typed, as its option's value.
          if (!takesText(el)) return fail("not_editable", "the field does not take text", [r.element]);
          r.mode = "datalist";
          const w = low(need.options && need.options[0]);
          const o = Array.from(el.list.options).find((o) => low(o.label || o.value) === w || low(o.value) === w);
          r.want = o ? o.value : (need.options && need.options[0]) || "";
          ready = await settleBox(el, false, "near");
        } else if (comboOf(el)) {
          r.mode = comboOf(el);
          r.expanded = el.getAttribute("aria-expanded") === "true";
          // A listbox that says it is collapsed opens on a click too
          // (Choices.js without its search box).
          r.closed = el.getAttribute("aria-expanded") === "false";
          ready = await settleBox(passFace(el) || el, true, "strict");
        } else {
          return fail("not_select", "not a native select or an ARIA combobox or listbox; pass custom parts", [r.element]);
        }
        break;
      case "focus":
        // Keys go where focus is: a field takes it itself; anything else
        // is clicked by the caller when focus() did not take.
        ready = await settleBox(el, false, "near");
        if (ready.ok) r.focused = focusEl(el);
        break;
      default: // click, hover, drag
        if (need.position && !(Number.isFinite(need.position.x) && Number.isFinite(need.position.y))) {
          return fail("invalid", "position must be finite numbers");
        }
        ready = await settleBox(passLabel(el) || passFace(el) || el, true, "strict", need.position);
    }
    if (!ready.ok) return ready;
    r.x = ready.x;
    r.y = ready.y;
    if (need.guard && !need.dry) {
      if (need.act === "hover") armHover(passLabel(el) || passFace(el) || el, r.x, r.y);
      else armClick(el, r.x, r.y);
    }
    return r;
  }

  // focusedIn is the focused element of el's own tree when it is el or
  // inside el (a shadow root keeps its own activeElement).
  function focusedIn(el) {
    const a = el.getRootNode().activeElement;
    return a && (a === el || el.contains(a)) ? a : null;
  }

  // fillPrepare readies a field for typing (focus, existing text
  // selected), or sets a picker input's value through the element's own
  // setter with the input and change events its picker sends.
  function fillPrepare(el, value) {
    const type = inputType(el);
    if (SET_TYPES.has(type)) {
      // A detached input of the same type says how the browser reads the
      // value (a date it normalises, a colour in lower case, a number
      // clamped to its range); "" means it does not take it.
      const probe = doc.createElement("input");
      probe.type = type;
      for (const a of ["min", "max", "step"]) if (el.hasAttribute(a)) probe.setAttribute(a, el.getAttribute(a));
      const v = value.trim();
      probe.value = v;
      // A range clamps and rounds what it is given; that is not the
      // number asked for.
      const taken = probe.value !== "" && (type !== "range" || Number(probe.value) === Number(v));
      el.focus({ preventScroll: true });
      el.value = v;
      el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      return { ok: true, mode: "set", want: taken ? probe.value : value };
    }
    el.focus({ preventScroll: true });
    if (el.isContentEditable) {
      const range = doc.createRange();
      range.selectNodeContents(el);
      const sel = global.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    } else if (typeof el.select === "function") {
      el.select();
    }
    if (!focusedIn(el)) return fail("not_focusable", "the element did not take focus");
    return { ok: true, mode: "type" };
  }

  // sameValue compares what a field holds with what was written: numbers
  // as numbers, colours ignoring case.
  function sameValue(el, got, want) {
    if (got === want) return true;
    const type = inputType(el);
    if ((type === "number" || type === "range") && got !== "" && want.trim() !== "") return Number(got) === Number(want);
    if (type === "color") return got.toLowerCase() === want.toLowerCase();
    return false;
  }

  // finish reads a filled field back; when it holds want, the field is
  // left (so the page's validation runs) and its state returned.
  async function finish(ref, want) {
    const el = byRef(ref);
    if (!el) return fail("stale_ref", "the element is gone (the page navigated or re-rendered); resolve the target again");
    const got = valueOf(el);
    if (!sameValue(el, got, want)) return { ok: true, committed: false, value: got };
    const a = focusedIn(el);
    if (a) a.blur();
    await settle();
    if (!el.isConnected) return fail("stale_ref", "the field was replaced while committing; resolve the target again");
    return Object.assign(state(el), { committed: true });
  }

  const optionInfo = (o) => ({ tag: "option", label: norm(o.label), text: o.value });

  // chooseOptions selects exactly the options wanted in a native select,
  // each by its label, else its value.
  function chooseOptions(el, wanted, multiple, dry) {
    if (wanted.length > 1 && !el.multiple) return fail("bad_target", "the select takes one option", [describe(el)]);
    const opts = Array.from(el.options);
    const chosen = [];
    for (const w of wanted) {
      const want = low(w);
      let hit = opts.filter((o) => low(o.label || o.textContent) === want);
      if (!hit.length) hit = opts.filter((o) => o.value === w);
      if (!hit.length) return fail("no_option", "no option with that label or value", opts.slice(0, 20).map(optionInfo));
      if (hit.length > 1) return fail("ambiguous", "several options match", hit.slice(0, 20).map(optionInfo));
      if (hit[0].disabled) return fail("disabled", "the option is disabled", [optionInfo(hit[0])]);
      chosen.push(hit[0]);
    }
    if (!dry) {
      el.focus({ preventScroll: true });
      if (el.multiple) {
        for (const o of opts) o.selected = chosen.includes(o);
      } else if (chosen.length) {
        el.value = chosen[0].value;
      }
      el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    }
    // A change handler may have put the old choice back.
    const committed = opts.every((o) => o.selected === chosen.includes(o));
    const labels = Array.from(el.selectedOptions).map((o) => norm(o.label || o.textContent));
    return { ok: true, value: labels[0] || "", values: labels, committed };
  }

  // @include options.js

  // @include segments.js

  function valueOf(el) {
    const kind = kindOf(el);
    if (kind === "checkbox" || kind === "radio") {
      if ("checked" in el && el.tagName === "INPUT") return el.checked;
      return el.getAttribute("aria-checked") === "true";
    }
    if (el.tagName === "SELECT") {
      const o = el.selectedOptions[0];
      return o ? norm(o.label || o.textContent) : "";
    }
    if (el.isContentEditable) return el.innerText;
    if ("value" in el) return el.value;
    return norm(el.textContent);
  }

  function read(ref) {
    return withEl(ref, (el) => ({ ok: true, value: valueOf(el) }));
  }

  function settle() {
    // Blur handlers have run by now; one task turn lets the microtasks and
    // zero-delay timers they queued (framework re-renders) run too.
    return new Promise((r) => setTimeout(r, 0));
  }

  function state(el) {
    const valid = typeof el.checkValidity === "function" ? el.checkValidity() : true;
    const invalid = !valid || el.getAttribute("aria-invalid") === "true";
    let errorText = idsText(el, el.getAttribute("aria-errormessage"));
    if (!errorText && invalid) errorText = idsText(el, el.getAttribute("aria-describedby"));
    return { ok: true, value: valueOf(el), invalid, validationMessage: el.validationMessage || "", errorText };
  }

  // Custom parts: selectors a script gives for a custom dropdown. They are
  // only ever passed to querySelector here, never run.
  function partEls(root, parts, name) {
    const sel = parts && parts[name];
    if (typeof sel !== "string" || !sel) return { els: [] };
    try {
      const scoped = deepAll(sel, root);
      return { els: scoped.length ? scoped : deepAll(sel) };
    } catch (e) {
      return { error: fail("bad_parts", "part " + name + " has an invalid selector: " + e.message) };
    }
  }

  // checkPartsOf checks the parts a custom dropdown needs: each selector
  // is valid, option is given, the trigger (when given) is one visible
  // element, the value display (when given) exists. Options may render
  // only once the dropdown opens.
  function checkPartsOf(el, parts) {
    const found = {};
    for (const name of ["trigger", "option", "value"]) {
      const { els, error } = partEls(el, parts, name);
      if (error) return error;
      found[name] = els;
    }
    if (!(typeof parts.option === "string" && parts.option)) return fail("missing_part", "part option is required");
    let trigger = null;
    if (parts.trigger) {
      const shown = found.trigger.filter(visible);
      if (shown.length === 0) return fail("missing_part", "part trigger matches no visible element");
      if (shown.length > 1) return fail("ambiguous", shown.length + " trigger parts match", shown.map(describe));
      trigger = shown[0];
    }
    if (parts.value && found.value.length === 0) return fail("missing_part", "part value matches no element");
    return { ok: true, trigger };
  }

  // Readers and file inputs (cdp/readers.go): what one element holds,
  // read without acting on it, and the element itself for
  // DOM.setFileInputFiles. Unlike pick, pickAnyOf takes hidden and disabled
  // elements: a value can be read from them, and a file input often hides
  // behind its label. Among several matches only a single visible one wins.
  function pickAnyOf(els) {
    if (els.length === 0) return fail("not_found", "no element matches");
    const shown = els.length > 1 ? els.filter(visible) : els;
    if (shown.length !== 1) return fail("ambiguous", els.length + " elements match; narrow the target (within, hasText, has) or pick one with nth", els.slice(0, 10).map(describe));
    return { ok: true, ref: refOf(shown[0]) };
  }

  // fieldValue is what a field holds, for value and values.
  function fieldValue(el) {
    if (el.tagName === "SELECT") {
      const o = el.selectedOptions[0];
      return { ok: true, value: o ? norm(o.label || o.textContent) : "" };
    }
    if (el.isContentEditable) return { ok: true, value: el.innerText };
    if ("value" in el && el.tagName !== "LI") return { ok: true, value: String(el.value) };
    const segs = segmentsIn(el);
    if (segs.length) return { ok: true, value: segmentedValue(partsOfSegments(segs)) };
    return fail("bad_target", "the element holds no value; read its text", [describe(el)]);
  }

  function readOf(ref, what, name) {
    return withEl(ref, (el) => {
      switch (what) {
        case "text":
          return { ok: true, value: typeof el.innerText === "string" ? el.innerText : norm(el.textContent) };
        case "value":
          return fieldValue(el);
        case "attribute":
          return { ok: true, value: el.getAttribute(String(name)) };
        case "checked": {
          const k = kindOf(el);
          if (k !== "checkbox" && k !== "radio") return fail("bad_target", "not a checkbox, switch or radio button", [describe(el)]);
          return { ok: true, value: el.tagName === "INPUT" ? el.checked : el.getAttribute("aria-checked") === "true" };
        }
        case "enabled":
          return { ok: true, value: !disabled(el) };
        case "focused":
          // In a shadow tree the document's activeElement is the host.
          return { ok: true, value: el.getRootNode().activeElement === el };
        case "editable": {
          const field = el.matches("input, textarea, select, [contenteditable], [role=textbox], [role=searchbox], [role=combobox], [role=spinbutton]");
          if (!field) return fail("bad_target", "not a field: an input, text area, select or editable element", [describe(el)]);
          const readOnly = el.readOnly === true || el.getAttribute("aria-readonly") === "true" ||
            (el.hasAttribute("contenteditable") && !el.isContentEditable);
          return { ok: true, value: !disabled(el) && !readOnly };
        }
      }
      return fail("bad_target", "no reader " + String(what));
    });
  }

  function fileInput(ref) {
    return withEl(ref, (el) => {
      if (el.tagName !== "INPUT" || el.type !== "file") return fail("bad_target", "not a file input (<input type=file>)", [describe(el)]);
      if (disabled(el)) return fail("disabled", "the file input is disabled", [describe(el)]);
      return { ok: true, multiple: el.multiple, count: el.files ? el.files.length : 0 };
    });
  }

  function elementOf(ref) {
    return byRef(ref);
  }

  // A click is checked where it lands. Once actionable finds a target
  // ready for a click, it arms capturing listeners for the press at that
  // point: when the press reaches something other than the element (the
  // page moved it, or put something over it, after the check), that press,
  // release and click are stopped before the page sees them, and
  // clickLanded reports the miss, so the click is tried again on a fresh
  // check. A press that never reached this document at the point (a frame
  // put over the element takes it) is a miss too. Presses elsewhere (a
  // person's) are left alone; listeners the page registered before ours on
  // the window still see the events. The guard lasts until clickLanded, or
  // 30 s for one a dead caller left: a busy host may take seconds between
  // the check and the press, and a guard gone by then let a click land on
  // whatever had moved over the element.
  // describeLanding describes where an event landed: the element its
  // path starts at, else the document.
  function describeLanding(path) {
    return describe(path[0] && path[0].nodeType === 1 ? path[0] : doc.documentElement);
  }

  const CLICK_EVENTS = ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "auxclick", "dblclick"];
  let guard = null;

  function disarm() {
    if (!guard) return;
    for (const type of CLICK_EVENTS) global.removeEventListener(type, guard.listener, true);
    global.clearTimeout(guard.timer);
  }

  function armClick(el, x, y) {
    disarm();
    const g = { state: "armed", listener: null, timer: 0, missed: null };
    // lands says whether ev, at the point, reached el (or a label of it).
    const lands = (ev, path) => {
      let on = path.includes(el) || (el.labels && Array.from(el.labels).some((l) => path.includes(l)));
      // Inside a closed shadow root the path stops at a host: ask the
      // element's own root what is under the point.
      for (let r = el.getRootNode(); !on && r !== doc && r.host; r = r.host.getRootNode()) {
        if (!path.includes(r.host)) continue;
        const inner = el.getRootNode().elementsFromPoint(ev.clientX, ev.clientY)[0];
        on = !!inner && (inner === el || el.contains(inner));
        break;
      }
      return on;
    };
    g.listener = (ev) => {
      const at = Math.abs(ev.clientX - x) <= 1.5 && Math.abs(ev.clientY - y) <= 1.5;
      if (g.state === "armed" && (ev.type === "pointerdown" || ev.type === "mousedown")) {
        if (!at) return;
        const path = ev.composedPath();
        const on = lands(ev, path);
        g.state = on ? "hit" : "missed";
        if (!on) g.missed = describeLanding(path);
      } else if (g.state === "hit" && at && (ev.type === "pointerup" || ev.type === "mouseup")) {
        // The page can move something over the point between the press
        // and the release (a list still animating closed): the release,
        // and the click the browser then sends to what the two have in
        // common, would reach it instead. Held back too; the press alone
        // makes no click. A target the press itself took away (an option
        // chosen on mousedown, its list hidden) has done its work.
        const path = ev.composedPath();
        if (!lands(ev, path) && el.isConnected && el.checkVisibility({ visibilityProperty: true })) {
          g.state = "missed";
          g.missed = describeLanding(path);
        }
      }
      if (g.state === "missed") {
        ev.stopImmediatePropagation();
        ev.preventDefault();
      }
      if (ev.type === "click" && g.state !== "armed") disarm();
    };
    for (const type of CLICK_EVENTS) global.addEventListener(type, g.listener, true);
    g.timer = global.setTimeout(disarm, 30000);
    guard = g;
  }

  function clickLanded() {
    const g = guard;
    disarm();
    guard = null;
    if (!g) return { ok: true };
    if (g.state === "armed") return fail("obscured", "the click did not reach the element: nothing in its page took the press at its point");
    if (g.state === "missed") return fail("obscured", "the click would have landed on another element, so it was held back", [g.missed]);
    return { ok: true };
  }

  // A hover is checked where the pointer arrived, as a click is where it
  // lands: the first pointer event at the point decides. One that reached
  // another element (moved over the target after the check) is a miss; the
  // page has seen it (arrival cannot be taken back, as a press can), and
  // hoverLanded has the hover tried again. What the page does in answer to
  // the arrival (a menu opening over its trigger) is the hover working.
  // When no event reached this document at the point (a frame put over the
  // target took it, or the pointer was there already), what is at the
  // point now decides.
  const HOVER_EVENTS = ["pointerover", "pointerenter", "mouseover", "mouseenter", "pointermove", "mousemove"];
  let hovering = null;

  function armHover(el, x, y) {
    disarmHover();
    const h = { el, x, y, state: "armed", missed: null, listener: null };
    h.listener = (ev) => {
      if (h.state !== "armed" || Math.abs(ev.clientX - x) > 1.5 || Math.abs(ev.clientY - y) > 1.5) return;
      const path = ev.composedPath();
      const on = path.includes(el) || !coverAt(el, x, y, false);
      h.state = on ? "hit" : "missed";
      if (!on) h.missed = describeLanding(path);
    };
    for (const type of HOVER_EVENTS) global.addEventListener(type, h.listener, true);
    hovering = h;
  }

  function disarmHover() {
    if (!hovering) return;
    for (const type of HOVER_EVENTS) global.removeEventListener(type, hovering.listener, true);
  }

  function hoverLanded() {
    const h = hovering;
    disarmHover();
    hovering = null;
    if (!h || h.state === "hit" || !h.el.isConnected) return { ok: true };
    let missed = h.missed;
    if (h.state === "armed") {
      const cover = coverAt(h.el, h.x, h.y, false);
      if (!cover) return { ok: true };
      missed = describe(cover);
    }
    return fail("obscured", "the pointer arrived on another element, so the hover is tried again", [missed]);
  }

  // focusEl focuses el as element.focus() does and reports whether focus
  // is now on it or inside it (a widget may hand it to an inner field).
  function focusEl(el) {
    if (typeof el.focus === "function") el.focus({ preventScroll: true });
    for (let a = doc.activeElement; a; a = a.shadowRoot ? a.shadowRoot.activeElement : null) {
      if (a === el || containsDeep(el, a)) return true;
      if (!a.shadowRoot) break;
    }
    return false;
  }

  // Bulk reads: every match of a set (texts, values), or the rows of one
  // table, in one call. Each stops, with limit_exceeded, once it would
  // return more than cells strings or chars characters in all, so a page
  // cannot make the reply unbounded.
  function overLimit(what, cells, chars) {
    return fail("limit_exceeded", what + " passes the limit of a bulk read (" + cells + " strings, " + chars +
      " characters in all); narrow the target");
  }

  function readSet(set, what, cells, chars) {
    const els = sets.get(set);
    if (!els) return lost();
    const out = [];
    let size = 0;
    for (const el of els) {
      let v;
      if (what === "text") v = typeof el.innerText === "string" ? el.innerText : norm(el.textContent);
      else {
        const r = fieldValue(el);
        if (!r.ok) return r;
        v = r.value;
      }
      size += v.length;
      if (out.length >= cells || size > chars) return overLimit("what the target matches", cells, chars);
      out.push(v);
    }
    return { ok: true, values: out };
  }

  const TABLE_ROLES = new Set(["table", "grid", "treegrid"]);
  const CELL_ROLES = new Set(["cell", "gridcell", "columnheader", "rowheader"]);
  const HEADER_ROLES = new Set(["columnheader"]);

  // tableRole is el's role as a table part, native or ARIA: a role
  // attribute wins, as in the accessibility tree.
  function tableRole(el) {
    const r = el.getAttribute("role");
    if (r) return r.trim().split(/\s+/)[0].toLowerCase();
    switch (el.tagName) {
      case "TABLE": return "table";
      case "TR": return "row";
      case "THEAD": case "TBODY": case "TFOOT": return "rowgroup";
      case "TD": return "cell";
      case "TH": return el.closest("thead") || el.getAttribute("scope") === "col" || !el.parentElement ||
        Array.from(el.parentElement.children).every((c) => c.tagName === "TH") ? "columnheader" : "rowheader";
    }
    return "";
  }

  // shownPart reports whether the accessibility tree keeps el: rendered
  // and not aria-hidden.
  function shownPart(el) {
    if (el.getAttribute("aria-hidden") === "true") return false;
    return typeof el.checkVisibility === "function" ? el.checkVisibility() : el.getClientRects().length > 0;
  }

  // partsOf lists the elements below root (through open shadow roots) that
  // belong to it: those of a role in want, not inside a nested table part
  // of a role in stop.
  function partsOf(root, want, stop) {
    const out = [];
    const walk = (n) => {
      const kids = n.shadowRoot ? [...n.children, ...n.shadowRoot.children] : n.children;
      for (const c of kids) {
        if (!shownPart(c)) continue;
        const r = tableRole(c);
        if (want.has(r)) { out.push(c); continue; }
        if (stop.has(r)) continue;
        walk(c);
      }
    };
    walk(root);
    return out;
  }

  // cellName is a cell's name as the accessibility tree gives it from its
  // content: its text (generated ::before and ::after text too, a line
  // break as a space, a no-break space kept), an image's alt, a field's
  // value, an element's aria-label in place of its content; hidden parts
  // left out.
  const squash = (s) => String(s).replace(/[ \t\n\r\f]+/g, " ").trim();
  // pseudoText reports whether any style sheet may give an element
  // ::before or ::after text: asking each element's pseudo style costs a
  // style resolution, which a page without such rules need not pay. A
  // sheet that cannot be read (another origin's) may.
  function pseudoText() {
    const sheets = [...doc.styleSheets, ...(doc.adoptedStyleSheets || [])];
    for (const sh of sheets) {
      let rules;
      try { rules = sh.cssRules; } catch { return true; }
      for (const r of rules) if (/:(before|after)\b/.test(r.cssText) && /content\s*:/.test(r.cssText)) return true;
    }
    return deepAll("*").some((e) => e.shadowRoot && e.shadowRoot.querySelector("style"));
  }
  let withPseudo = true;
  function generated(el, which) {
    if (!withPseudo) return "";
    const m = /^"((?:[^"\\]|\\.)*)"$/.exec(global.getComputedStyle(el, which).content);
    return m ? m[1].replace(/\\(.)/g, "$1") : "";
  }
  function cellName(cell) {
    if (cell.hasAttribute("aria-labelledby")) return idsText(cell, cell.getAttribute("aria-labelledby"));
    if (cell.hasAttribute("aria-label") && norm(cell.getAttribute("aria-label"))) return norm(cell.getAttribute("aria-label"));
    let out = "";
    const walk = (n) => {
      out += generated(n, "::before");
      for (const c of n.nodeType === 1 && n.shadowRoot ? n.shadowRoot.childNodes : n.childNodes) {
        if (c.nodeType === 3) { out += c.data; continue; }
        if (c.nodeType !== 1 || c.matches("script, style, template") || c.getAttribute("aria-hidden") === "true") continue;
        if (c.tagName === "BR") { out += " "; continue; }
        if (c.getClientRects().length === 0 && !c.matches("slot")) continue;
        const label = c.getAttribute("aria-label");
        if (label && norm(label)) { out += " " + label + " "; continue; }
        if (c.tagName === "IMG") { out += " " + (c.getAttribute("alt") || "") + " "; continue; }
        if (c.tagName === "SELECT") { const o = c.selectedOptions[0]; out += " " + (o ? o.label : "") + " "; continue; }
        if (c.tagName === "TEXTAREA" || (c.tagName === "INPUT" && TEXT_TYPES.has(inputType(c)))) { out += " " + c.value + " "; continue; }
        if (c.tagName === "INPUT") continue;
        const block = global.getComputedStyle(c).display !== "inline";
        if (block) out += " ";
        walk(c);
        if (block) out += " ";
      }
      out += generated(n, "::after");
    };
    walk(cell);
    return squash(out);
  }

  // tableOf reads the table, grid, treegrid or row group ref names into
  // its header row (the first row of column headers, if any) and its
  // other rows, each cell by its name.
  function tableOf(ref, cells, chars) {
    return withEl(ref, (el) => {
      const role = tableRole(el);
      if (!TABLE_ROLES.has(role) && role !== "rowgroup") {
        return fail("bad_target", "not a table, grid, treegrid or row group", [describe(el)]);
      }
      withPseudo = pseudoText();
      const rows = partsOf(el, new Set(["row"]), TABLE_ROLES);
      const out = [];
      let headers = null, n = 0, size = 0;
      for (const row of rows) {
        const cs = partsOf(row, CELL_ROLES, new Set(["row", ...TABLE_ROLES]));
        const names = cs.map(cellName);
        n += names.length;
        for (const s of names) size += s.length;
        if (n > cells || size > chars) return overLimit("the table", cells, chars);
        if (headers === null && out.length === 0 && cs.length && cs.every((c) => HEADER_ROLES.has(tableRole(c)))) headers = names;
        else out.push(names);
      }
      return { ok: true, headers: headers || [], rows: out };
    });
  }

  return { readSet, tableOf, resolve, findSet, adoptSet, narrowSet, nthSet, setElements, dropSets, pickSet, actionable, finish, read, optionAt, shown, readOf, fileInput, elementOf, clickLanded, hoverLanded, sliderOf, segmentsOf };
})
