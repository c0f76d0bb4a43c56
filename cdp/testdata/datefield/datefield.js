// The React widgets of cdp/datefield_test.go and cdp/passcombo_test.go,
// bundled by `make tools` into one browser module
// (.tools/testlibs/bundles/datefield.bundle.js).
// Each element <div data-datefield="aria|mui" data-locale data-label>
// becomes one date field (a time field with data-time, a date and time
// one with data-datetime; data-min sets the earliest date it deems
// valid); what the widget reports through its own onChange is kept in
// window.dateValues[label] as YYYY-MM-DD, HH:MM or YYYY-MM-DDTHH:MM, ""
// when the field holds no whole value. data-month makes MUI's a month and
// year field (a card's expiry) in data-format ("MM/YYYY" unless given,
// "MM/YY" too), reported as YYYY-MM.
import "./env.js";
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";
import { Button, DateField, DateInput, DateSegment, I18nProvider, Label, ListBox, ListBoxItem, Popover, Select as AriaSelect, SelectValue, TimeField } from "react-aria-components";
import { DateField as MuiDateField } from "@mui/x-date-pickers/DateField";
import { TimeField as MuiTimeField } from "@mui/x-date-pickers/TimeField";
import { DateTimeField as MuiDateTimeField } from "@mui/x-date-pickers/DateTimeField";
import { LocalizationProvider } from "@mui/x-date-pickers/LocalizationProvider";
import { AdapterDayjs } from "@mui/x-date-pickers/AdapterDayjs";
import { parseDate } from "@internationalized/date";
import dayjs from "dayjs";
import "dayjs/locale/en-gb";
import "dayjs/locale/de";
import TextField from "@mui/material/TextField";
import MenuItem from "@mui/material/MenuItem";
import Select from "react-select";
import { Dropdown } from "primereact/dropdown";

const values = (globalThis.dateValues = {});

// kind is "date", "time" or "datetime".
function aria(label, locale, kind, min) {
  const Field = kind === "time" ? TimeField : DateField;
  const size = { date: 10, time: 5, datetime: 16 }[kind];
  return h(I18nProvider, { locale },
    h(Field, { name: "when", granularity: kind === "datetime" ? "minute" : undefined, minValue: min ? parseDate(min) : undefined,
      onChange: (v) => (values[label] = v ? v.toString().slice(0, size) : "") },
      h(Label, null, label),
      h(DateInput, null, (segment) => h(DateSegment, { segment }))));
}

function mui(label, locale, kind, min, format) {
  const Field = { date: MuiDateField, month: MuiDateField, time: MuiTimeField, datetime: MuiDateTimeField }[kind];
  const fmt = { date: "YYYY-MM-DD", month: "YYYY-MM", time: "HH:mm", datetime: "YYYY-MM-DDTHH:mm" }[kind];
  return h(LocalizationProvider, { dateAdapter: AdapterDayjs, adapterLocale: locale },
    h(Field, { label, ampm: kind === "date" || kind === "month" ? undefined : false, minDate: min ? dayjs(min) : undefined,
      format: kind === "month" ? format || "MM/YYYY" : undefined,
      onChange: (v) => (values[label] = v && v.isValid() ? v.format(fmt) : "") }));
}

// Comboboxes whose input takes no pointer: <div data-select="mui|rs"
// data-label data-options="A,B,C">. MUI's select keeps a transparent
// native input, pointer-events none, under its display; react-select
// without search keeps a dummy input of no size. The choice goes to
// window.dateValues[label] too.
function MuiSelect({ label, options }) {
  const [v, setV] = useState("");
  return h(TextField, { select: true, label, value: v, style: { minWidth: 200 },
    onChange: (e) => { setV(e.target.value); values[label] = e.target.value; } },
    options.map((o) => h(MenuItem, { key: o, value: o }, o)));
}

function ReactSelect({ label, options }) {
  const id = "rs-" + label.replace(/\W+/g, "-");
  return h("div", null, h("label", { htmlFor: id }, label),
    h(Select, { inputId: id, isSearchable: false, options: options.map((o) => ({ value: o, label: o })),
      onChange: (o) => (values[label] = o ? o.value : "") }));
}

function PrimeSelect({ label, options }) {
  const [v, setV] = useState(null);
  const id = "pr-" + label.replace(/\W+/g, "-");
  return h("div", null, h("label", { htmlFor: id }, label),
    h(Dropdown, { inputId: id, value: v, options, placeholder: "Pick one", style: { width: 200 },
      onChange: (e) => { setV(e.value); values[label] = e.value; } }));
}

function AriaSelectField({ label, options }) {
  return h(AriaSelect, { name: "pick", onSelectionChange: (k) => (values[label] = k) },
    h(Label, null, label), h(Button, null, h(SelectValue)),
    h(Popover, null, h(ListBox, null, options.map((o) => h(ListBoxItem, { key: o, id: o }, o)))));
}

for (const el of document.querySelectorAll("[data-select]")) {
  const { select: kind, label = "Choice", options = "" } = el.dataset;
  createRoot(el).render(h({ mui: MuiSelect, aria: AriaSelectField, prime: PrimeSelect }[kind] || ReactSelect, { label, options: options.split(",") }));
}

for (const el of document.querySelectorAll("[data-datefield]")) {
  const { datefield: lib, locale = "en-US", label = "Date", time, datetime, month, min, format } = el.dataset;
  const make = lib === "mui" ? mui : aria;
  const kind = time !== undefined ? "time" : datetime !== undefined ? "datetime" : month !== undefined ? "month" : "date";
  createRoot(el).render(make(label, locale, kind, min, format));
}
