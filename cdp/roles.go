package cdp

import "strings"

// Role words: how a script names a role, and the roles Chromium's
// accessibility tree reports for it.

// axRoles maps a role as scripts write it (WAI-ARIA) to the roles
// Chromium's tree reports for it.
var axRoles = map[string][]string{
	"img":          {"image", "img"},
	"image":        {"image"},
	"textbox":      {"textbox"},
	"presentation": {"none"},
	"none":         {"none"},
	"document":     {"RootWebArea", "document"},
	// A table the browser takes for layout (no headers, no caption) is
	// still a table of rows and cells to the person reading it.
	"table": {"table", "LayoutTable"},
	"row":   {"row", "LayoutTableRow"},
	"cell":  {"cell", "LayoutTableCell"},
}

// labelRoles are the roles of controls a label can name.
var labelRoles = []string{
	"textbox", "searchbox", "combobox", "checkbox", "radio", "switch", "slider", "spinbutton",
	"listbox", "button", "Date", "DateTime", "InputTime", "ColorWell", "menuitemcheckbox", "menuitemradio",
}

// axSkip are Chromium's internal roles that are never a target.
var axSkip = map[string]bool{"StaticText": true, "InlineTextBox": true, "LineBreak": true}

// axQuery is what to ask the tree: the roles, and the name to match.
func axQuery(loc Locator) (roles []string, name string) {
	if loc.Label != "" {
		return labelRoles, loc.Label
	}
	role := strings.TrimSpace(loc.Role)
	if rs, ok := axRoles[strings.ToLower(role)]; ok {
		return rs, loc.Name
	}
	return []string{strings.ToLower(role)}, loc.Name
}
