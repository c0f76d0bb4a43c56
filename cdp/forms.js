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

  function textWithout(node, skip) {
    // The label's text, leaving out the controls inside it (a wrapping
    // label holds its input, a select's options, …).
    let out = "";
    const walk = (n) => {
      for (const c of n.childNodes) {
        if (c.nodeType === 3) out += c.data + " ";
        else if (c.nodeType === 1 && c !== skip && !c.matches("input, select, textarea, button, script, style")) walk(c);
      }
    };
    walk(node);
    return norm(out);
  }

  function idsText(list) {
    return norm(String(list || "").split(/\s+/).filter(Boolean)
      .map((id) => { const e = doc.getElementById(id); return e ? e.textContent : ""; }).join(" "));
  }

  function labelsOf(el) {
    const out = [];
    if (el.labels) for (const l of el.labels) out.push(textWithout(l, el));
    const wrap = el.closest("label");
    if (wrap && !(el.labels && Array.from(el.labels).includes(wrap))) out.push(textWithout(wrap, el));
    if (el.hasAttribute("aria-label")) out.push(norm(el.getAttribute("aria-label")));
    if (el.hasAttribute("aria-labelledby")) out.push(idsText(el.getAttribute("aria-labelledby")));
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
    if (el.hasAttribute("aria-labelledby")) return idsText(el.getAttribute("aria-labelledby"));
    if (el.hasAttribute("aria-label")) return norm(el.getAttribute("aria-label"));
    const labels = labelsOf(el);
    if (labels.length) return labels[0];
    const tag = el.tagName.toLowerCase();
    if (tag === "input" && ["button", "submit", "reset"].includes((el.type || "").toLowerCase())) return norm(el.value);
    if (tag === "img") return norm(el.getAttribute("alt"));
    const role = roleOf(el);
    if (["button", "link", "heading", "tab", "menuitem", "option", "checkbox", "radio", "switch", "cell"].includes(role)) {
      return norm(el.textContent);
    }
    return norm(el.getAttribute("title") || el.getAttribute("placeholder") || "");
  }

  // Exact matches win over substring matches.
  function match(els, textsOf, want) {
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
    const all = () => Array.from(doc.querySelectorAll(CONTROLS));
    if (typeof target.ref === "string") {
      const el = byRef(target.ref);
      return el ? { els: [el] } : { error: fail("stale_ref", "the element is gone (the page navigated or re-rendered); resolve the target again") };
    }
    if (typeof target.selector === "string") {
      try { return { els: Array.from(doc.querySelectorAll(target.selector)) }; }
      catch (e) { return { error: fail("bad_target", "invalid selector: " + e.message) }; }
    }
    if (typeof target.testId === "string") {
      return { els: Array.from(doc.querySelectorAll("[data-testid]")).filter((e) => e.getAttribute("data-testid") === target.testId) };
    }
    if (typeof target.label === "string") return { els: match(all(), labelsOf, target.label) };
    if (typeof target.placeholder === "string") {
      return { els: match(Array.from(doc.querySelectorAll("[placeholder]")), (e) => [e.getAttribute("placeholder")], target.placeholder) };
    }
    if (typeof target.role === "string") {
      const role = target.role.toLowerCase();
      const els = Array.from(doc.querySelectorAll("*")).filter((e) => roleOf(e) === role);
      if (typeof target.name !== "string") return { els };
      return { els: match(els, (e) => [accessibleName(e)], target.name) };
    }
    if (typeof target.name === "string") {
      return { els: Array.from(doc.querySelectorAll("[name]")).filter((e) => e.getAttribute("name") === target.name) };
    }
    if (typeof target.text === "string") {
      const els = Array.from(doc.body ? doc.body.querySelectorAll("*") : []).filter((e) => !e.matches("script, style, template"));
      return { els: deepest(match(els, (e) => [e.textContent], target.text)) };
    }
    return { error: fail("bad_target", "target names no way to find the element") };
  }

  function resolve(target) {
    const { els, error } = find(target);
    if (error) return error;
    return pick(els);
  }

  // adopt applies resolve's choice to elements found elsewhere (the
  // accessibility tree): els are the best-matching tier, in document order.
  function adopt(els, target) {
    if (!Array.isArray(els) || !els.every((e) => e && e.nodeType === 1)) return fail("bad_target", "adopt takes an array of elements");
    if (!target || typeof target !== "object") return fail("bad_target", "target must be an object");
    return pick(els);
  }

  function pick(els) {
    if (els.length === 0) return fail("not_found", "no element matches");
    const usable = els.filter((e) => visible(e) && !disabled(e));
    const skipped = els.filter((e) => !usable.includes(e)).map(describe);
    if (usable.length === 0) {
      const code = els.some((e) => visible(e)) ? "disabled" : "hidden";
      return fail(code, els.length === 1 ? "the only match is " + code : "every match is hidden or disabled", els.map(describe));
    }
    if (usable.length > 1) return fail("ambiguous", usable.length + " elements match", usable.map(describe));
    const el = usable[0];
    return { ok: true, ref: refOf(el), kind: kindOf(el), element: describe(el), skipped };
  }

  function editable(el) {
    if (el.isContentEditable) return true;
    return kindOf(el) === "text" && !el.readOnly && !disabled(el);
  }

  function prepareText(ref) {
    return withEl(ref, (el) => {
      if (!editable(el)) return fail("not_editable", "the element does not take text", [describe(el)]);
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
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
      if (doc.activeElement !== el && !el.contains(doc.activeElement)) return fail("not_focusable", "the element did not take focus");
      return { ok: true };
    });
  }

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
    let errorText = idsText(el.getAttribute("aria-errormessage"));
    if (!errorText && invalid) errorText = idsText(el.getAttribute("aria-describedby"));
    return { ok: true, value: valueOf(el), invalid, validationMessage: el.validationMessage || "", errorText };
  }

  async function commit(ref) {
    const el = byRef(ref);
    if (!el) return fail("stale_ref", "the element is gone (the page navigated or re-rendered); resolve the target again");
    if (doc.activeElement === el || el.contains(doc.activeElement)) doc.activeElement.blur();
    await settle();
    if (!el.isConnected) return fail("stale_ref", "the field was replaced while committing; resolve the target again");
    return state(el);
  }

  // point scrolls the element into view and returns where a click lands,
  // refusing when something else covers that spot.
  function point(ref) {
    return withEl(ref, (el) => pointOf(el));
  }

  function pointOf(el) {
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hit = doc.elementFromPoint(x, y);
    const label = el.labels && Array.from(el.labels).some((l) => l.contains(hit));
    if (hit && hit !== el && !el.contains(hit) && !label) return fail("obscured", "another element covers it", [describe(hit)]);
    return { ok: true, x, y };
  }

  function selectOption(ref, option) {
    return withEl(ref, (el) => {
      if (el.tagName !== "SELECT") return fail("not_select", "the element is not a native select; pass custom parts", [describe(el)]);
      const want = low(option);
      const opts = Array.from(el.options);
      let hit = opts.filter((o) => low(o.label || o.textContent) === want);
      if (!hit.length) hit = opts.filter((o) => o.value === option);
      if (!hit.length) return fail("no_option", "no option with that label or value", opts.map((o) => ({ tag: "option", label: norm(o.label), text: o.value })));
      if (hit.length > 1) return fail("ambiguous", "several options match", hit.map((o) => ({ tag: "option", label: norm(o.label), text: o.value })));
      if (hit[0].disabled) return fail("disabled", "the option is disabled");
      el.focus({ preventScroll: true });
      el.value = hit[0].value;
      el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      return { ok: true, value: valueOf(el) };
    });
  }

  // Custom parts: selectors a script gives for a custom dropdown. They are
  // only ever passed to querySelector here, never run.
  function partEls(root, parts, name) {
    const sel = parts && parts[name];
    if (typeof sel !== "string" || !sel) return { els: [] };
    try {
      const scoped = Array.from(root.querySelectorAll(sel));
      return { els: scoped.length ? scoped : Array.from(doc.querySelectorAll(sel)) };
    } catch (e) {
      return { error: fail("bad_parts", "part " + name + " has an invalid selector: " + e.message) };
    }
  }

  // checkParts checks the parts a custom dropdown needs: each selector is
  // valid, the trigger (when given) is visible, the value display (when
  // given) exists. Options may render only once the dropdown opens.
  function checkParts(ref, parts) {
    return withEl(ref, (el) => {
      const report = {};
      for (const name of ["trigger", "option", "value"]) {
        const { els, error } = partEls(el, parts, name);
        if (error) return error;
        report[name] = { found: els.length, visible: els.filter(visible).length };
      }
      if (!(parts && typeof parts.option === "string" && parts.option)) return fail("missing_part", "part option is required");
      if (parts.trigger && report.trigger.visible === 0) return fail("missing_part", "part trigger matches no visible element");
      if (parts.value && report.value.found === 0) return fail("missing_part", "part value matches no element");
      return { ok: true, parts: report };
    });
  }

  function partPoint(ref, parts, name, text) {
    return withEl(ref, (el) => {
      if (name === "trigger" && !(parts && parts.trigger)) return pointOf(el);
      const { els, error } = partEls(el, parts, name);
      if (error) return error;
      let cands = els.filter(visible);
      if (typeof text === "string") cands = match(cands, (e) => [e.textContent, e.getAttribute("aria-label") || ""], text);
      if (cands.length === 0) return fail("not_found", "no visible " + name + (typeof text === "string" ? " matches" : ""));
      if (cands.length > 1) return fail("ambiguous", cands.length + " " + name + " parts match", cands.map(describe));
      return pointOf(cands[0]);
    });
  }

  function readPart(ref, parts) {
    return withEl(ref, (el) => {
      const { els, error } = partEls(el, parts, "value");
      if (error) return error;
      const v = els.length ? els[0] : el;
      return { ok: true, value: "value" in v && v.tagName === "INPUT" ? v.value : norm(v.textContent) };
    });
  }

  return { resolve, adopt, prepareText, read, commit, point, selectOption, checkParts, partPoint, readPart };
})
