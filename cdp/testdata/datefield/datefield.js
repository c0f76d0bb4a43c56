// The segmented date fields of cdp/datefield_test.go, bundled by `make
// tools` into one browser module (.tools/testlibs/bundles/datefield.bundle.js).
// Each element <div data-datefield="aria|mui" data-locale data-label>
// becomes one date field (a time field with data-time; data-min sets the
// earliest date it deems valid); what the widget reports through its own
// onChange is kept in window.dateValues[label] as YYYY-MM-DD, or HH:MM for
// a time field (data-time), "" when the field holds no whole value.
import "./env.js";
import { createElement as h } from "react";
import { createRoot } from "react-dom/client";
import { DateField, DateInput, DateSegment, I18nProvider, Label, TimeField } from "react-aria-components";
import { DateField as MuiDateField } from "@mui/x-date-pickers/DateField";
import { TimeField as MuiTimeField } from "@mui/x-date-pickers/TimeField";
import { LocalizationProvider } from "@mui/x-date-pickers/LocalizationProvider";
import { AdapterDayjs } from "@mui/x-date-pickers/AdapterDayjs";
import { parseDate } from "@internationalized/date";
import dayjs from "dayjs";
import "dayjs/locale/en-gb";
import "dayjs/locale/de";

const values = (globalThis.dateValues = {});

function aria(label, locale, time, min) {
  const Field = time ? TimeField : DateField;
  return h(I18nProvider, { locale },
    h(Field, { name: "when", minValue: min ? parseDate(min) : undefined, onChange: (v) => (values[label] = v ? v.toString().slice(0, time ? 5 : 10) : "") },
      h(Label, null, label),
      h(DateInput, null, (segment) => h(DateSegment, { segment }))));
}

function mui(label, locale, time, min) {
  const Field = time ? MuiTimeField : MuiDateField;
  const fmt = time ? "HH:mm" : "YYYY-MM-DD";
  return h(LocalizationProvider, { dateAdapter: AdapterDayjs, adapterLocale: locale },
    h(Field, { label, ampm: time ? false : undefined, minDate: min ? dayjs(min) : undefined, onChange: (v) => (values[label] = v && v.isValid() ? v.format(fmt) : "") }));
}

for (const el of document.querySelectorAll("[data-datefield]")) {
  const { datefield: kind, locale = "en-US", label = "Date", time, min } = el.dataset;
  const make = kind === "mui" ? mui : aria;
  createRoot(el).render(make(label, locale, time !== undefined, min));
}
