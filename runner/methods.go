package runner

import (
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
)

// The host API's method table: a row per method a script calls, stating
// once what the interceptor (intercept.go) does around its body. Adding a
// host method is adding a row and a body; TestEveryMethodHasItsRow holds
// the capability objects (hostAPI) and the table to each other, and the
// contract (runner/sdk/contract.json) lists the methods by it.

// method is one row of the table.
type method struct {
	api  string                 // what scripts, errors and the trace call it: "tab.fill"
	cap  permissions.Capability // the capability object it is a method of
	name string                 // its Go name there: "Fill" (on the wire: fill)
	gate gatePolicy
	rate Channel  // the channel whose rate it takes a token of; "" none
	host hostPart // the host interface it needs, refused (ErrNoHost) without
	tab  bool     // its tab (callReq.tab) is attached before the body runs
	wait waitKind
	errs errWording
	page pageEvidence
	// untraced: the trace does not record it (a report, or the
	// bootstrap's own call).
	untraced bool
}

// gatePolicy is how a call passes the run's gate (bounds.go).
type gatePolicy uint8

const (
	// gated: it enters the gate, taking a token of rate past which it is
	// refused (limit_exceeded); once the run has settled it fails (closed).
	gated gatePolicy = iota
	// gateDrop: a display the script sends and forgets: past its rate,
	// and once the run has settled, it is dropped and succeeds.
	gateDrop
	// gateReport: a report that becomes a run event: it takes a token of
	// rate or is dropped; the event itself is emitted only while the
	// gate is open (scriptEvent).
	gateReport
	// gateOpen: it touches only the run's own state and needs no gate.
	gateOpen
)

// waitKind is how long a call may wait.
type waitKind uint8

const (
	// The zero waitKind: the run's own time (local state, or a wait of
	// its own), what a row that names no wait gets.
	_ waitKind = iota
	// waitHost: the host's default wait (boundWait), from the gate on,
	// so that a host or page that never answers does not hold the script.
	waitHost
	// waitCall: the call's own timeout (callReq.timeout, 0 the default),
	// from when its tab is attached.
	waitCall
)

// errWording is how the body's error is worded for the script.
type errWording uint8

const (
	errsAsIs        errWording = iota // the body words its own
	errsHost                          // hostAnswer: a host past the wait did not answer in time
	errsBrowser                       // browserErr: a cdp or host error gets its code
	errsHostBrowser                   // both, hostAnswer first
)

// pageEvidence is what the trace keeps of the call's page.
type pageEvidence uint8

const (
	pageNone pageEvidence = iota // the call's record only
	// pageFailure: a failed call gets what the tab showed (hostCall.traced).
	pageFailure
	// pageNavigation: as pageFailure, and a tab's first page's title
	// names it in the trace.
	pageNavigation
	// pageAction: as pageFailure, with the page before and after
	// (Config.TraceActionScreenshots).
	pageAction
)

// hostPart is a host interface a method needs.
type hostPart uint8

const (
	hostNone hostPart = iota
	hostUI
	hostClipboard
	hostWorkspace
	hostTabs
)

// methodID is a row's index in methods.
type methodID uint8

const (
	mUINotify methodID = iota
	mUIOpen
	mClipboardRead
	mClipboardWrite
	mWorkspaceProjectDir
	mConfigGet
	mConfigSet
	mConfigDelete
	mConfigKeys
	mPaneRegister
	mPaneUnregister
	mContextResult
	mContextLog
	mContextPayload
	mContextStep
	mContextProgress
	mTabsActive
	mTabsFind
	mTabsAll
	mTabsOpen
	mTabsTriggered
	mTabURL
	mTabTitle
	mTabGoto
	mTabWaitForNavigation
	mTabWaitFor
	mTabText
	mTabValue
	mTabAttribute
	mTabChecked
	mTabVisible
	mTabCount
	mTabTexts
	mTabValues
	mTabTable
	mTabExpect
	mTabExpectPage
	mTabScreenshot
	mTabClose
	mTabReload
	mTabGoBack
	mTabGoForward
	mTabWaitForURL
	mTabExpectDownload
	mTabWaitForDownload
	mPageEvaluate
	mFormsFill
	mFormsCheck
	mFormsSelect
	mFormsSetFiles
	mFormsOnDialog
	mFormsPress
	mFormsClick
	mFormsDblclick
	mFormsHover
	mFormsDragTo
	mFormsFocus
	mFormsType
	methodCount
)

// Shorthands for the table's capabilities.
const (
	capUI, capClipboard, capWorkspace = permissions.CapUI, permissions.CapClipboard, permissions.CapWorkspace
	capConfig, capPane, capContext    = permissions.CapConfig, permissions.CapPaneControls, permissions.CapContext
	capTabs, capTab, capPageJS        = permissions.CapTabs, permissions.CapTab, permissions.CapPageJS
	capForms                          = permissions.CapForms
)

// methods is the table. A reader takes only the browser grant; forms'
// methods are called on a tab, and named so.
var methods = [methodCount]method{
	mUINotify:            {api: "ui.notify", cap: capUI, name: "Notify", gate: gateDrop, rate: ChannelNotify, host: hostUI, wait: waitHost, errs: errsHost},
	mUIOpen:              {api: "ui.open", cap: capUI, name: "Open", rate: ChannelOpen, host: hostUI, wait: waitHost, errs: errsHost},
	mClipboardRead:       {api: "clipboard.read", cap: capClipboard, name: "Read", host: hostClipboard, wait: waitHost, errs: errsHost},
	mClipboardWrite:      {api: "clipboard.write", cap: capClipboard, name: "Write", rate: ChannelClipboard, host: hostClipboard, wait: waitHost, errs: errsHost},
	mWorkspaceProjectDir: {api: "workspace.projectDir", cap: capWorkspace, name: "ProjectDir", host: hostWorkspace, wait: waitHost, errs: errsHost},

	mConfigGet: {api: "config.get", cap: capConfig, name: "Get"},
	// Another process may hold the state's lock.
	mConfigSet:    {api: "config.set", cap: capConfig, name: "Set", rate: ChannelConfig, wait: waitHost},
	mConfigDelete: {api: "config.delete", cap: capConfig, name: "Delete", rate: ChannelConfig, wait: waitHost},
	mConfigKeys:   {api: "config.keys", cap: capConfig, name: "Keys"},

	mPaneRegister: {api: "paneControls.register", cap: capPane, name: "Register", rate: ChannelPane},
	// Each control is unregistered once, so its events are bounded by
	// register's rate, and it releases only what the run holds.
	mPaneUnregister: {api: "paneControls.unregister", cap: capPane, name: "Unregister", gate: gateOpen},

	mContextResult:   {api: "context.result", cap: capContext, name: "Result"},
	mContextLog:      {api: "context.log", cap: capContext, name: "Log", gate: gateReport, rate: ChannelLog, untraced: true},
	mContextPayload:  {api: "context.payload", cap: capContext, name: "Payload", untraced: true}, // the bootstrap asks, not the script
	mContextStep:     {api: "context.step", cap: capContext, name: "Step", gate: gateReport, rate: ChannelStep, untraced: true},
	mContextProgress: {api: "context.progress", cap: capContext, name: "Progress", gate: gateReport, rate: ChannelProgress, untraced: true},

	mTabsActive:    {api: "tabs.active", cap: capTabs, name: "Active", host: hostTabs, wait: waitHost, errs: errsHostBrowser},
	mTabsFind:      {api: "tabs.find", cap: capTabs, name: "Find", host: hostTabs, wait: waitHost, errs: errsHostBrowser},
	mTabsAll:       {api: "tabs.all", cap: capTabs, name: "All", host: hostTabs, wait: waitHost, errs: errsHostBrowser},
	mTabsOpen:      {api: "tabs.open", cap: capTabs, name: "Open", host: hostTabs, errs: errsBrowser}, // waits in line, then as goto
	mTabsTriggered: {api: "tabs.triggered", cap: capTabs, name: "Triggered", host: hostTabs, wait: waitHost, errs: errsHostBrowser},

	mTabURL:               {api: "tab.url", cap: capTab, name: "URL", tab: true, wait: waitHost, errs: errsBrowser},
	mTabTitle:             {api: "tab.title", cap: capTab, name: "Title", tab: true, wait: waitHost, errs: errsBrowser},
	mTabGoto:              {api: "tab.goto", cap: capTab, name: "Goto", tab: true, wait: waitCall, errs: errsBrowser, page: pageNavigation},
	mTabWaitForNavigation: {api: "tab.waitForNavigation", cap: capTab, name: "WaitForNavigation", tab: true, wait: waitCall, errs: errsBrowser, page: pageNavigation},
	mTabWaitFor:           {api: "tab.waitFor", cap: capTab, name: "WaitFor", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabText:              {api: "tab.text", cap: capTab, name: "Text", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabValue:             {api: "tab.value", cap: capTab, name: "Value", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabAttribute:         {api: "tab.attribute", cap: capTab, name: "Attribute", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabChecked:           {api: "tab.checked", cap: capTab, name: "Checked", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabVisible:           {api: "tab.visible", cap: capTab, name: "Visible", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabCount:             {api: "tab.count", cap: capTab, name: "Count", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabTexts:             {api: "tab.texts", cap: capTab, name: "Texts", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabValues:            {api: "tab.values", cap: capTab, name: "Values", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabTable:             {api: "tab.table", cap: capTab, name: "Table", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabExpect:            {api: "tab.expect", cap: capTab, name: "Expect", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	mTabExpectPage:        {api: "tab.expectPage", cap: capTab, name: "ExpectPage", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	// A screenshot takes no timeout of the script's: the default bounds it.
	mTabScreenshot: {api: "tab.screenshot", cap: capTab, name: "Screenshot", tab: true, wait: waitCall, errs: errsBrowser},
	// Close needs the run's record of the tab, not its session.
	mTabClose:      {api: "tab.close", cap: capTab, name: "Close", wait: waitHost, errs: errsBrowser},
	mTabReload:     {api: "tab.reload", cap: capTab, name: "Reload", tab: true, wait: waitCall, errs: errsBrowser, page: pageNavigation},
	mTabGoBack:     {api: "tab.goBack", cap: capTab, name: "GoBack", tab: true, wait: waitCall, errs: errsBrowser, page: pageNavigation},
	mTabGoForward:  {api: "tab.goForward", cap: capTab, name: "GoForward", tab: true, wait: waitCall, errs: errsBrowser, page: pageNavigation},
	mTabWaitForURL: {api: "tab.waitForURL", cap: capTab, name: "WaitForURL", tab: true, wait: waitCall, errs: errsBrowser, page: pageNavigation},
	// The SDK's waitForDownload is these two calls, recorded once, by
	// the second.
	mTabExpectDownload:  {api: apiWaitForDownload, cap: capTab, name: "ExpectDownload", tab: true, wait: waitCall, errs: errsBrowser},
	mTabWaitForDownload: {api: apiWaitForDownload, cap: capTab, name: "WaitForDownload", tab: true, wait: waitCall, errs: errsBrowser, page: pageFailure},
	// Evaluate words its own errors: a result that is no data is its own.
	mPageEvaluate: {api: "tab.evaluate", cap: capPageJS, name: "Evaluate", tab: true, wait: waitHost},

	mFormsFill:     {api: "tab.fill", cap: capForms, name: "Fill", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsCheck:    {api: "tab.check", cap: capForms, name: "Check", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsSelect:   {api: "tab.select", cap: capForms, name: "Select", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsSetFiles: {api: "tab.setFiles", cap: capForms, name: "SetFiles", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsOnDialog: {api: "tab.onDialog", cap: capForms, name: "OnDialog", tab: true},
	mFormsPress:    {api: "tab.press", cap: capForms, name: "Press", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsClick:    {api: "tab.click", cap: capForms, name: "Click", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsDblclick: {api: "tab.dblclick", cap: capForms, name: "Dblclick", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsHover:    {api: "tab.hover", cap: capForms, name: "Hover", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsDragTo:   {api: "tab.dragTo", cap: capForms, name: "DragTo", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsFocus:    {api: "tab.focus", cap: capForms, name: "Focus", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
	mFormsType:     {api: "tab.type", cap: capForms, name: "Type", tab: true, wait: waitCall, errs: errsBrowser, page: pageAction},
}

// methodByWire finds a row by its capability and its name on the wire
// ("forms", "fill"): the name capnweb hands ArgError.
var methodByWire = func() map[[2]string]methodID {
	out := make(map[[2]string]methodID, methodCount)
	for id := range methodID(methodCount) {
		m := &methods[id]
		out[[2]string{string(m.cap), m.wire()}] = id
	}
	return out
}()

// wire is the method's name on its capability object, as capnweb exposes
// it and the contract lists it.
func (m *method) wire() string { return capnweb.JSName(m.name) }

// tabFirst reports whether the method is a tab's: the SDK sends the
// tab's ID before the script's arguments.
func (m *method) tabFirst() bool { return m.cap == capTab || m.cap == capForms || m.cap == capPageJS }

// apiOf is what scripts call method of capability cap; "cap.method" for
// one the table does not have.
func apiOf(cap permissions.Capability, method string) string {
	if id, ok := methodByWire[[2]string{string(cap), method}]; ok {
		return methods[id].api
	}
	return string(cap) + "." + method
}

// tsMethod is how the SDK's Tab offers a row of the table as a plain
// wrapper: check the arguments, call the host, return the answer. The
// contract test writes the wrappers (sdk/tab_gen.ts, the class
// TabCalls, which browser.ts's Tab extends) from these, and fails when
// that file is stale; the rows left out need the live JavaScript value
// (a function, a RegExp) and are written by hand in browser.ts.
type tsMethod struct {
	doc    string    // its JSDoc, as scripts read it
	params []tsParam // the script's arguments, in order
	result string    // the type the promise resolves to
	// answer is a TypeScript expression of the host's answer (%s), what
	// the method resolves to; "" is the answer as it is.
	answer string
}

// tsParam is one argument of a tsMethod.
type tsParam struct {
	name, ts string
	def      string // its default, "" none
	// check is a TypeScript expression of the argument (%[1]s) and the
	// API's name (api), what is sent: the SDK's checks of it (browser.ts);
	// "" sends it as it is.
	check string
}

// Arguments the wrappers share.
var (
	tsTarget     = tsParam{name: "target", ts: "Target"}
	tsReadOpts   = tsParam{name: "opts", ts: "ReadOptions", def: "{}"}
	tsNavOpts    = tsParam{name: "opts", ts: "NavigationOptions", def: "{}"}
	tsFormOpts   = tsParam{name: "opts", ts: "FormOptions", def: "{}"}
	tsNeedsForms = " Needs forms."
)

// tsMethods are the Tab methods tab_gen.ts holds, by row.
var tsMethods = map[methodID]tsMethod{
	mTabURL:   {doc: "url returns the address the tab shows now.", result: "string"},
	mTabTitle: {doc: "title returns the tab's title now.", result: "string"},
	mTabGoto: {doc: "goto loads url in this tab and resolves once it has loaded (see waitUntil), with the response's status and the " +
		"address it came from after redirects: a 404 page loads like any other, so check status. Redirects include the page's own " +
		"while it loads (location.replace, location.href =, a meta refresh, the usual signed-out redirect): goto resolves at the page " +
		"they end on, with its status and address. A page that cannot be loaded at all rejects with code \"navigation\", one that takes " +
		"too long with \"timeout\". Only http and https addresses (and about:blank) can be opened; anything else, and any address the " +
		"host keeps from pages, rejects with code \"navigation_blocked\".",
		params: []tsParam{{name: "url", ts: "string", check: "checkURL(api, %[1]s)"}, tsNavOpts},
		result: "NavigationResponse", answer: "response(api, %s)"},
	mTabReload: {doc: "reload loads the tab's document again and resolves as goto does, with the status and address of the document it ends at.",
		params: []tsParam{tsNavOpts}, result: "NavigationResponse", answer: "response(api, %s)"},
	mTabGoBack: {doc: "goBack goes one entry back in the tab's history, as the browser's back button does, and resolves as goto does; " +
		"null when there is no entry before this one. A move within one page (a #fragment, the history API) resolves status 0.",
		params: []tsParam{tsNavOpts}, result: "NavigationResponse | null", answer: "moved(api, %s)"},
	mTabGoForward: {doc: "goForward goes one entry forward in the tab's history; null when there is none. See goBack.",
		params: []tsParam{tsNavOpts}, result: "NavigationResponse | null", answer: "moved(api, %s)"},
	mTabText: {doc: "text returns the text the target's element shows, with the line breaks a person sees. Like every reader (text, " +
		"value, attribute, checked, visible, count) it needs only browser, reads the page without running its code, and logs the target " +
		"but never what it read. On a page outside the script's sites= it rejects with \"site_not_allowed\".\n\n" +
		"text, value, attribute and checked wait for their target to be there as long as an action would, up to opts.timeout (default " +
		"30 s), so a page still rendering just works; then they reject with \"not_found\". Several matching elements reject with " +
		"\"ambiguous\" at once: the target needs narrowing, not time. visible and count answer at once: they are questions about the " +
		"page now. To wait for a change, use expect.",
		params: []tsParam{tsTarget, tsReadOpts}, result: "string"},
	mTabValue: {doc: "value returns what the target's field holds: an input's or textarea's value, a select's chosen label, an editable " +
		"element's text. Any other element rejects with code \"bad_target\". Disabled and hidden fields can be read too. It waits for " +
		"the field as text does.",
		params: []tsParam{tsTarget, tsReadOpts}, result: "string"},
	mTabAttribute: {doc: "attribute returns the named attribute of the target's element, or null when it has none. It waits for the " +
		"element as text does.",
		params: []tsParam{tsTarget, {name: "name", ts: "string"}, tsReadOpts},
		result: "string | null", answer: "orNull(%s)"},
	mTabChecked: {doc: "checked reports whether the target's checkbox, switch or radio button is checked (\"bad_target\" for anything " +
		"else). It waits for the element as text does.",
		params: []tsParam{tsTarget, tsReadOpts}, result: "boolean"},
	mTabVisible: {doc: "visible reports whether an element the target names is shown: false when none matches or every match is " +
		"hidden, true when any is shown (disabled ones included). It answers at once, without waiting.",
		params: []tsParam{tsTarget}, result: "boolean"},
	mTabCount: {doc: "count returns how many elements the target matches, hidden ones included; a target with its own nth counts 1 " +
		"when the nth falls among its matches, else 0 (as Playwright's locator.nth(i).count()). It answers at once, without waiting.",
		params: []tsParam{tsTarget}, result: "number"},
	mTabTexts: {doc: "texts returns the text every element the target matches shows, in the order count counts them (hidden matches " +
		"included), in one call: [] when none matches. It answers at once, without waiting. More than 100,000 matches, or 4 Mi " +
		"characters in all, rejects with \"limit_exceeded\": narrow the target.",
		params: []tsParam{tsTarget}, result: "string[]", answer: "strings(%s)"},
	mTabValues: {doc: "values returns what every field the target matches holds, as value reads one, and as texts does.",
		params: []tsParam{tsTarget}, result: "string[]", answer: "strings(%s)"},
	mTabTable: {doc: "table reads the table, grid, treegrid or row group the target names into { headers, rows }: each cell by the " +
		"name a screen reader gives it (its text, an image's alt, a field's value), the header row (when the first row is all column " +
		"headers) apart, hidden rows left out. It waits for the target as text does; the limits of texts hold for its cells.",
		params: []tsParam{tsTarget, tsReadOpts}, result: "TableRows", answer: "tableRows(%s)"},
	mTabScreenshot: {doc: "screenshot returns a PNG of the tab's visible part, or of the whole page.",
		params: []tsParam{{name: "opts", ts: "ScreenshotOptions", def: "{}"}},
		result: "Uint8Array", answer: "png(api, %s)"},
	mFormsFill: {doc: "fill types value into the field target names, as a user would, and returns the field's state afterwards. If " +
		"the page does not keep the value (a maxlength, a mask, a script), it rejects with a NotCommittedError whose kept is what the " +
		"field holds." + tsNeedsForms,
		params: []tsParam{tsTarget, {name: "value", ts: "string"}, tsFormOpts},
		result: "FieldState"},
	mFormsCheck: {doc: "check ticks (or, with checked false, unticks) a checkbox or radio button." + tsNeedsForms,
		params: []tsParam{tsTarget, {name: "checked", ts: "boolean", def: "true"}, tsFormOpts},
		result: "void"},
	mFormsSetFiles: {doc: "setFiles puts files into the file input the target names, as picking them would (the input may be hidden " +
		"behind its label). Each path is relative to the script's folder, like read= grants, and must be a file under one of them: any " +
		"other rejects with code \"not_granted\", a missing one with \"not_found\". An empty list clears the input; several files need " +
		"an <input multiple> (\"bad_target\" otherwise)." + tsNeedsForms,
		params: []tsParam{tsTarget, {name: "paths", ts: "string | string[]", check: "pathList(%[1]s)"}, tsFormOpts},
		result: "void"},
	mFormsClick: {doc: "click clicks the element target names, as a user would: a left click at the centre of its visible part, or " +
		"with opts.button, clickCount, modifiers and position." + tsNeedsForms,
		params: []tsParam{tsTarget, {name: "opts", ts: "ClickOptions", def: "{}"}},
		result: "void"},
	mFormsDblclick: {doc: "dblclick double-clicks the element target names (click, click, dblclick)." + tsNeedsForms,
		params: []tsParam{tsTarget, {name: "opts", ts: "DblclickOptions", def: "{}"}},
		result: "void"},
	mFormsHover: {doc: "hover moves the pointer over the element target names, once it is visible, still and not covered: menus and " +
		"tooltips that open on hover open." + tsNeedsForms,
		params: []tsParam{tsTarget, {name: "opts", ts: "HoverOptions", def: "{}"}},
		result: "void"},
	mFormsDragTo: {doc: "dragTo drags the element source names onto the element target names with the mouse: HTML drag and drop and " +
		"lists that follow the pointer alike. Both wait as hover's target does." + tsNeedsForms,
		params: []tsParam{{name: "source", ts: "Target"}, tsTarget, tsFormOpts},
		result: "void"},
	mFormsFocus: {doc: "focus focuses the element target names (\"bad_target\" when it cannot take focus)." + tsNeedsForms,
		params: []tsParam{tsTarget, tsFormOpts}, result: "void"},
	mFormsType: {doc: "type focuses the element target names (clicking it when it takes no focus itself) and types text into whatever " +
		"then has focus, one key press per character, opts.delay milliseconds apart: for editors and widgets that listen to keys. For " +
		"a plain field, fill is faster and checks the result. At most 10000 characters (\"limit_exceeded\")." + tsNeedsForms,
		params: []tsParam{tsTarget, {name: "text", ts: "string"},
			{name: "opts", ts: "TypeOptions", def: "{}"}},
		result: "void"},
	mFormsPress: {doc: "press presses a key, such as \"Enter\", \"Tab\" or \"a\", in the element opts.target names (focused first) or " +
		"in whatever has focus." + tsNeedsForms,
		params: []tsParam{{name: "key", ts: "string"},
			{name: "opts", ts: "PressOptions", def: "{}"}},
		result: "void"},
}

// tsExpectation is a check of tab.expect(target) (Expectations) or, with
// page, of tab.expectPage() (PageExpectations) that takes an expected
// text or RegExp, or nothing: tab_gen.ts's ExpectationCalls and
// PageExpectationCalls hold them, in order, as they send the row of
// tab.expect or tab.expectPage.
type tsExpectation struct {
	name, kind string // the method and the Expectation kind it sends
	page       bool
	// param names the expected text or RegExp, and what says it in
	// messages ("the text"); "" takes none.
	param, what string
	doc         string
}

var tsExpectations = []tsExpectation{
	{name: "toHaveText", kind: "text", param: "text", what: "the text", doc: "toHaveText expects the element's text (as Tab.text " +
		"reads it) to be text, white space aside: runs of it count as one space, and none at either end. A RegExp need only match " +
		"somewhere in the text."},
	{name: "toContainText", kind: "containsText", param: "text", what: "the text",
		doc: "toContainText expects the element's text to contain text (white space aside), or to match a RegExp."},
	{name: "toHaveValue", kind: "value", param: "value", what: "the value",
		doc: "toHaveValue expects the field to hold exactly value (as Tab.value reads it), or a value matching a RegExp."},
	{name: "toBeVisible", kind: "visible", doc: "toBeVisible expects an element the target names to be shown, as Tab.visible reports it."},
	{name: "toBeHidden", kind: "hidden",
		doc: "toBeHidden expects no element the target names to be shown: none matches, or every match is hidden."},
	{name: "toHaveClass", kind: "class", param: "cls", what: "the class",
		doc: "toHaveClass expects the element's whole class attribute to be cls, or to match a RegExp."},
	{name: "toBeEnabled", kind: "enabled",
		doc: "toBeEnabled expects the element not to be disabled (the disabled attribute, a disabled fieldset, aria-disabled)."},
	{name: "toBeDisabled", kind: "disabled", doc: "toBeDisabled expects the element to be disabled."},
	{name: "toBeFocused", kind: "focused", doc: "toBeFocused expects the element to have the focus."},
	{name: "toBeEditable", kind: "editable", doc: "toBeEditable expects the field to take typing: an input, text area, select or " +
		"editable element, neither disabled nor read-only. Another kind of element rejects at once with \"bad_target\"."},
	{name: "toHaveURL", kind: "url", page: true, param: "url", what: "the URL",
		doc: "toHaveURL expects the tab's address (as Tab.url reads it) to be url exactly, or to match a RegExp."},
	{name: "toHaveTitle", kind: "title", page: true, param: "title", what: "the title",
		doc: "toHaveTitle expects the page's title to be title (white space aside), or to match a RegExp."},
}
