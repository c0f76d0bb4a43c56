  // A segmented date or time field (React Aria's DateField, MUI X's
  // accessible field DOM, …): a labelled group of spinbuttons, one per
  // part, in the locale's order. A label names the group, or each of its
  // segments ("day, Birth date"), or a hidden input kept for forms; all
  // of these are one field to fill.

  // segmentsIn lists the shown spinbuttons of el when it holds two or
  // more: then el is a segmented field.
  function segmentsIn(el) {
    if (!el || roleOf(el) === "spinbutton") return [];
    const segs = deepAll("[role=spinbutton]", el).filter(visible);
    return segs.length >= 2 ? segs : [];
  }

  // segmentedOf is the segmented field el is part of: the nearest group
  // around it holding its segments.
  function segmentedOf(el) {
    const g = el.parentElement && el.parentElement.closest("[role=group]");
    return g && segmentsIn(g).length ? g : null;
  }

  // segmentedFor is the field a form input stands in for when the input
  // shows nothing itself (MUI's <label for> names such an input).
  function segmentedFor(el) {
    // The cheap test first: pick runs this on every match.
    if (el.tagName !== "INPUT" || !(el.parentElement && el.parentElement.closest("[role=group]"))) return null;
    if (visible(el) && !srOnly(el) && el.getAttribute("aria-hidden") !== "true" && global.getComputedStyle(el).opacity !== "0") return null;
    return segmentedOf(el);
  }

  // oneSegmented is the field when every element of els is a segment of
  // the same one (a label matching each segment's name).
  function oneSegmented(els) {
    const g = els.length > 1 && roleOf(els[0]) === "spinbutton" ? segmentedOf(els[0]) : null;
    return g && els.every((e) => roleOf(e) === "spinbutton" && segmentedOf(e) === g) ? g : null;
  }

  // A segment's part, told by its name (in a few languages) or else by
  // its range: 1-31 a day, up to 99 or more a year, 0-23 an hour, 0-59
  // minutes and then seconds, 1-12 a month in a field with a day or a year
  // (else an hour of a 12-hour clock), 0-1 the AM/PM.
  const PART_WORDS = [
    ["day", /^(day|tag|jour|d[ií]a|giorno)\b/i],
    ["month", /^(month|monat|mois|mes|mese)\b/i],
    ["year", /^(year|jahr|ann[ée]e|a[ñn]o|anno)\b/i],
    ["hour", /^(hours?|stunden?|heures?|horas?|ore|ora)\b/i],
    ["minute", /^(minutes?|minuten?|minutos?|minuti)\b/i],
    ["second", /^(seconds?|sekunden?|secondes?|segundos?|secondi)\b/i],
    ["dayPeriod", /^(am\/pm|am|pm|dayperiod|day period|vormittag\/nachmittag)\b/i],
  ];

  function partsOfSegments(segs) {
    const num = (el, a) => {
      const v = el.getAttribute(a);
      return v === null || v.trim() === "" || !isFinite(Number(v)) ? null : Number(v);
    };
    const info = segs.map((el) => ({
      name: low(el.getAttribute("aria-label") || accessibleName(el)),
      now: num(el, "aria-valuenow"), min: num(el, "aria-valuemin"), max: num(el, "aria-valuemax"),
      text: norm(el.getAttribute("aria-valuetext") || el.textContent),
    }));
    for (const s of info) {
      const w = PART_WORDS.find(([, re]) => re.test(s.name));
      s.part = w ? w[0] : "";
    }
    const has = (p) => info.some((s) => s.part === p);
    for (const s of info) {
      if (s.part) continue;
      if (s.max === 31) s.part = "day";
      else if (s.max >= 99) s.part = "year";
      else if (s.max === 23) s.part = "hour";
      else if (s.max === 59) s.part = has("minute") ? "second" : "minute";
      else if (s.max === 12) s.part = has("day") || has("year") || info.some((o) => o.max === 31 || o.max >= 99) ? "month" : "hour";
      else if (s.max === 1) s.part = "dayPeriod";
      else s.part = "";
    }
    return info;
  }

  // segmentedValue is what a segmented field holds, in ISO order where
  // each part has a number (2024-03-07, 2027-03 for a month and year
  // field, 14:05, 2024-03-07T14:05; a 12-hour clock's hour counted by its
  // AM/PM), else its segments' text. A year of two digits (a card's
  // expiry, "MM/YY") is the one of the fifty years either side of this
  // one that ends in them, as the Go side fills it (fullYear).
  function segmentedValue(info) {
    const n = {};
    let half = -1;
    for (const s of info) {
      if (s.part === "year" && s.max !== null && s.max < 100 && s.now !== null) {
        const now = new Date().getFullYear();
        n.year = now - 50 + ((s.now - (now - 50)) % 100 + 100) % 100;
        continue;
      }
      if (s.part === "dayPeriod") {
        // 0 is AM; React Aria counts 12 for PM, others 1.
        half = (s.now !== null ? s.now >= 1 : /^p/i.test(s.text)) ? 12 : 0;
        continue;
      }
      if (s.now === null || !s.part) return info.map((o) => o.text).join(" ");
      n[s.part] = s.now;
    }
    if ("hour" in n && half >= 0) n.hour = (n.hour % 12) + half;
    const pad = (v, w) => String(v || 0).padStart(w, "0");
    const out = [];
    if ("year" in n) out.push(pad(n.year, 4) + "-" + pad(n.month, 2) + ("day" in n ? "-" + pad(n.day, 2) : ""));
    if ("hour" in n) out.push(pad(n.hour, 2) + ":" + pad(n.minute, 2) + ("second" in n ? ":" + pad(n.second, 2) : ""));
    return out.join("T");
  }

  // segmentsOf reads a segmented field: its segments in their order, and
  // what the field says of itself (a hidden input's value, its validity).
  // With focus a segment's index, that segment is focused first, for the
  // keys; with leave set, focus leaves the field (so it commits) first.
  async function segmentsOf(ref, focus, leave) {
    const el = byRef(ref);
    if (!el) return fail("stale_ref", "the element is gone (the page navigated or re-rendered); resolve the target again");
    const segs = segmentsIn(el);
    if (!segs.length) return fail("not_editable", "not a segmented field (a group of spinbuttons)", [describe(el)]);
    if (el.getAttribute("aria-readonly") === "true" || segs.every((s) => s.getAttribute("aria-readonly") === "true")) {
      return fail("readonly", "the field is read-only", [describe(el)]);
    }
    if (typeof focus === "number" && focus >= 0) {
      const s = segs[focus];
      if (!s) return fail("stale_ref", "the field's segments changed; try again");
      s.focus({ preventScroll: true });
      if (!focusedIn(s)) return fail("not_focusable", "the segment did not take focus", [describe(s)]);
    }
    if (leave) {
      const a = focusedIn(el);
      if (a) a.blur();
      // A framework's effects (React Aria's validity) run after the
      // render the blur caused: a frame, then a task.
      await settle();
      await nextFrame();
      await settle();
    }
    // The form input is inside the group or beside it (React Aria keeps
    // its constraint validity there, shown only once a form is sent).
    const inputs = Array.from(el.querySelectorAll("input")).concat(el.parentElement ? Array.from(el.parentElement.querySelectorAll(":scope > input[name]")) : []);
    const bad = inputs.find((i) => i.validity && !i.validity.valid);
    const invalid = !!bad || el.getAttribute("aria-invalid") === "true" || segs.some((s) => s.getAttribute("aria-invalid") === "true");
    const info = partsOfSegments(segs);
    return { ok: true, segments: info, value: segmentedValue(info), invalid,
      validationMessage: bad ? bad.validationMessage : "",
      errorText: idsText(el, el.getAttribute("aria-errormessage")) || (invalid ? idsText(el, el.getAttribute("aria-describedby")) : "") };
  }
