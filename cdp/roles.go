package cdp

import (
	"slices"
	"strings"
)

// Role words: how a script names a role, and the roles Chromium's
// accessibility tree reports for it.
//
// The tree reports a WAI-ARIA role by its ARIA word ("button", "term",
// "mark"), and a role ARIA has no word for by Chromium's own name
// ("ColorWell", "DescriptionList", "LabelText"). A script writes the ARIA
// word where there is one, and otherwise a lower-case word:
//
//	tree role                                    script word
//	image, img                                   img (image too)
//	RootWebArea, document                        document
//	DescriptionListTerm(Deprecated), term        term
//	DescriptionListDetail(Deprecated), definition definition
//	ContentInsertion, Insertion, insertion       insertion
//	ContentDeletion, Deletion, deletion          deletion
//	Caption, Code, Emphasis, Mark, Strong,       caption, code, emphasis, mark, strong,
//	Subscript, Superscript, Time                 subscript, superscript, time
//	MathMLMath, math                             math
//	TextFieldWithComboBox, ComboBox*, combobox   combobox
//	MenuListOption, ListBoxOption, option        option
//	MenuListPopup                                menulistpopup
//	SectionHeader/HeaderAsNonLandmark            sectionheader
//	SectionFooter/FooterAsNonLandmark            sectionfooter
//	ColorWell                                    colorwell
//	DescriptionList                              descriptionlist
//	Abbr                                         abbr
//	DisclosureTriangle(Grouped)                  disclosuretriangle (summary too)
//	Iframe, IframePresentational                 iframe
//	Date, DateTime, InputTime                    date, datetime, inputtime
//	LabelText                                    labeltext
//	Legend, Figcaption, Canvas                   legend, figcaption, canvas
//	Video, Audio                                 video, audio
//	Ruby, RubyAnnotation                         ruby, rubyannotation
//	Pre(Deprecated), Details                     pre, details
//	Section, SectionWithoutName                  section
//	ListMarker, SvgRoot (an svg with no name)    listmarker, svgroot
//	PluginObject, EmbeddedObject                 pluginobject, embeddedobject
//	LayoutTable, LayoutTableRow, LayoutTableCell table, row, cell
//	MathMLFraction, MathMLRow, …                 mathmlfraction, mathmlrow, …
//
// Chromium's own name is accepted too, in any case ("ColorWell",
// "colorwell", "DescriptionListTerm"), and so is any ARIA word, which the
// tree reports as it is written.
//
// textbox also answers for the date and time fields (Date, DateTime,
// InputTime: input type date, time, month, week, datetime-local), which
// WAI-ARIA's HTML mapping, WPT and Playwright call textbox; their own
// words stay theirs.

// roleTable lists, in the order roleWord prefers, each script word with the
// tree roles it stands for. A tree role's word is the first that lists it.
var roleTable = []struct {
	word string
	tree []string
}{
	{"img", []string{"image", "img"}},
	{"image", []string{"image", "img"}},
	{"textbox", []string{"textbox", "TextField"}},
	{"presentation", []string{"none"}},
	{"none", []string{"none"}},
	{"document", []string{"RootWebArea", "document"}},
	// A table the browser takes for layout (no headers, no caption) is
	// still a table of rows and cells to the person reading it.
	{"table", []string{"table", "LayoutTable"}},
	{"row", []string{"row", "LayoutTableRow"}},
	{"cell", []string{"cell", "LayoutTableCell"}},
	{"term", []string{"term", "DescriptionListTerm", "DescriptionListTermDeprecated"}},
	{"definition", []string{"definition", "DescriptionListDetail", "DescriptionListDetailDeprecated"}},
	{"insertion", []string{"insertion", "Insertion", "ContentInsertion"}},
	{"deletion", []string{"deletion", "Deletion", "ContentDeletion"}},
	{"caption", []string{"caption", "Caption"}},
	{"code", []string{"code", "Code"}},
	{"emphasis", []string{"emphasis", "Emphasis"}},
	{"mark", []string{"mark", "Mark"}},
	{"strong", []string{"strong", "Strong"}},
	{"subscript", []string{"subscript", "Subscript"}},
	{"superscript", []string{"superscript", "Superscript"}},
	{"time", []string{"time", "Time"}},
	{"math", []string{"math", "MathMLMath"}},
	{"combobox", []string{"combobox", "TextFieldWithComboBox", "ComboBoxGrouping", "ComboBoxMenuButton", "ComboBoxSelect"}},
	{"option", []string{"option", "MenuListOption", "ListBoxOption"}},
	{"sectionheader", []string{"sectionheader", "SectionHeader", "HeaderAsNonLandmark"}},
	{"sectionfooter", []string{"sectionfooter", "SectionFooter", "FooterAsNonLandmark"}},
	{"menulistpopup", []string{"MenuListPopup"}},
	{"colorwell", []string{"ColorWell"}},
	{"descriptionlist", []string{"DescriptionList"}},
	{"abbr", []string{"Abbr"}},
	{"disclosuretriangle", []string{"DisclosureTriangle", "DisclosureTriangleGrouped"}},
	{"summary", []string{"DisclosureTriangle", "DisclosureTriangleGrouped"}},
	{"iframe", []string{"Iframe", "IframePresentational"}},
	{"date", []string{"Date"}},
	{"datetime", []string{"DateTime"}},
	{"inputtime", []string{"InputTime"}},
	{"labeltext", []string{"LabelText"}},
	{"legend", []string{"Legend"}},
	{"figcaption", []string{"Figcaption"}},
	{"canvas", []string{"Canvas"}},
	{"video", []string{"Video"}},
	{"audio", []string{"Audio"}},
	{"ruby", []string{"Ruby"}},
	{"rubyannotation", []string{"RubyAnnotation"}},
	{"pre", []string{"Pre", "PreDeprecated"}},
	{"details", []string{"Details"}},
	{"section", []string{"Section", "SectionWithoutName"}},
	{"listmarker", []string{"ListMarker"}},
	{"svgroot", []string{"SvgRoot"}},
	{"pluginobject", []string{"PluginObject"}},
	{"embeddedobject", []string{"EmbeddedObject"}},
	{"mathmlfraction", []string{"MathMLFraction"}},
	{"mathmlidentifier", []string{"MathMLIdentifier"}},
	{"mathmlmultiscripts", []string{"MathMLMultiscripts"}},
	{"mathmlnonescript", []string{"MathMLNoneScript"}},
	{"mathmlnumber", []string{"MathMLNumber"}},
	{"mathmloperator", []string{"MathMLOperator"}},
	{"mathmlover", []string{"MathMLOver"}},
	{"mathmlprescriptdelimiter", []string{"MathMLPrescriptDelimiter"}},
	{"mathmlroot", []string{"MathMLRoot"}},
	{"mathmlrow", []string{"MathMLRow"}},
	{"mathmlsquareroot", []string{"MathMLSquareRoot"}},
	{"mathmlstringliteral", []string{"MathMLStringLiteral"}},
	{"mathmlsub", []string{"MathMLSub"}},
	{"mathmlsubsup", []string{"MathMLSubSup"}},
	{"mathmlsup", []string{"MathMLSup"}},
	{"mathmltable", []string{"MathMLTable"}},
	{"mathmltablecell", []string{"MathMLTableCell"}},
	{"mathmltablerow", []string{"MathMLTableRow"}},
	{"mathmltext", []string{"MathMLText"}},
	{"mathmlunder", []string{"MathMLUnder"}},
	{"mathmlunderover", []string{"MathMLUnderOver"}},
}

// alsoRoles are tree roles a word answers for besides its own, which keep
// their own word (roleWord does not give the word for them).
var alsoRoles = map[string][]string{"textbox": {"Date", "DateTime", "InputTime"}}

var (
	// axRoles maps a lower-cased script word, or Chromium's lower-cased
	// name of a tree role, to the tree roles it stands for.
	axRoles = map[string][]string{}
	// wordOf maps a tree role to its script word.
	wordOf = map[string]string{}
)

func init() {
	for _, e := range roleTable {
		axRoles[e.word] = append(slices.Clip(e.tree), alsoRoles[e.word]...)
		for _, r := range e.tree {
			if _, ok := wordOf[r]; !ok {
				wordOf[r] = e.word
			}
		}
	}
	// Chromium's own name stands for what its word stands for.
	for r, w := range wordOf {
		if l := strings.ToLower(r); axRoles[l] == nil {
			axRoles[l] = axRoles[w]
		}
	}
}

// roleWord is the word a script writes for a role the tree reports: the
// ARIA word where there is one, else the lower-case word of roleTable,
// else (a role of a later Chromium that roleTable does not list) the
// tree's own name, which axQuery accepts as written.
func roleWord(treeRole string) string {
	if w, ok := wordOf[treeRole]; ok {
		return w
	}
	return treeRole
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
	lower := strings.ToLower(role)
	if rs, ok := axRoles[lower]; ok {
		return rs, loc.Name
	}
	if role != lower {
		// A name of Chromium's that roleTable does not list yet.
		return []string{lower, role}, loc.Name
	}
	return []string{role}, loc.Name
}
