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

// apiOf is what scripts call method of capability cap; "cap.method" for
// one the table does not have.
func apiOf(cap permissions.Capability, method string) string {
	if id, ok := methodByWire[[2]string{string(cap), method}]; ok {
		return methods[id].api
	}
	return string(cap) + "." + method
}
