package runner_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// argErrorsScript hands each facade arguments the host refuses: an unknown
// key, a typo close to a key, a wrong type and a nested wrong type. Most go
// past the SDK's own checks, straight to the host objects through the
// SDK's runtime (as a script whose SDK and app disagree would reach them),
// and are mapped by the SDK's browserError as its calls are; ui.notify's
// goes through the SDK, which checks the keys but not the level's type.
// Each outcome is what the script reads off the error.
const argErrorsScript = `// @permissions browser forms
import { context, tabs, ui } from "tranquil/automation";
const sdk = import.meta.resolve("tranquil/automation");
const { runtime } = await import(new URL("./runtime.ts", sdk).href);
const { browserError } = await import(new URL("./browser.ts", sdk).href);
const rt = runtime();
const tab = await tabs.active();
const seen = (e) => ({
  name: e.name,
  code: e.code,
  message: e.message.split(" (at ")[0],
  fields: e.details ?? { argument: e.argument, path: e.path, key: e.key, takes: e.takes, closest: e.closest, want: e.want, got: e.got },
});
async function refused(cap, method, api, ...args) {
  try {
    await rt.capability(cap, api)[method](...args);
    return "not refused";
  } catch (e) {
    return seen(browserError(e, api, cap, tab.id));
  }
}
const out = {
  gotoKey: await refused("tab", "goto", "tab.goto", tab.id, "about:blank", { waitUntil: "load", wait: 5 }),
  gotoTypo: await refused("tab", "goto", "tab.goto", tab.id, "about:blank", { waitUnitl: "load" }),
  gotoType: await refused("tab", "goto", "tab.goto", tab.id, "about:blank", { timeout: "5000" }),
  textTarget: await refused("tab", "text", "tab.text", tab.id, { lable: "Email" }),
  waitForTarget: await refused("tab", "waitFor", "tab.waitFor", tab.id, { Label: "Email" }),
  clickTypo: await refused("forms", "click", "tab.click", tab.id, { label: "A" }, { dryrun: true }),
  fillNested: await refused("forms", "fill", "tab.fill", tab.id, { label: 5 }, "x"),
  pressNested: await refused("forms", "press", "tab.press", tab.id, "Enter", { target: { label: "A", rol: "button" } }),
  pressList: await refused("forms", "press", "tab.press", tab.id, "Enter", { modifiers: ["Shift", 1] }),
  fillValue: await refused("forms", "fill", "tab.fill", tab.id, { label: "A" }, 5),
  dialogTypo: await refused("forms", "onDialog", "tab.onDialog", tab.id, { confirm: { accept: true, promptTxt: "x" } }),
  openTypo: await refused("tabs", "open", "tabs.open", "about:blank", { backgroud: true }),
  openType: await refused("tabs", "open", "tabs.open", "about:blank", { background: "yes" }),
  uiTypo: await refused("ui", "open", "ui.open", "notes.md", { splt: "right" }),
  progressTypo: await refused("context", "progress", "context.progress", { message: "m", fracton: 0.5 }),
};
try {
  await ui.notify("hi", { level: 3 });
  out.notifyType = "not refused";
} catch (e) {
  out.notifyType = seen(e);
}
await context.result(JSON.parse(JSON.stringify(out)));
`

// An argument the host refuses reaches the script as fields, not only
// words: code invalid, the argument, the path, and the key, the keys taken
// and the closest of them, or what the value had to be and is, on a
// TypeError; the SDK's "did you mean" comes from the closest key. A tab's
// method counts the script's arguments, not the tab's ID the SDK sends.
// Each facade that takes request objects is called: tab, forms, tabs, ui
// and context.
func TestArgumentErrorsReachTheScriptAsFields(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnv(t)
	entry := e.run(t, "argerrors.ts", argErrorsScript)
	type seen struct {
		Name, Code, Message string
		Fields              map[string]any
	}
	var res map[string]seen
	result(t, entry, &res)
	targetKeys := []any{"label", "placeholder", "name", "role", "text", "selector", "testId", "ref", "exact", "frame", "within", "hasText", "has", "nth"}
	for name, want := range map[string]struct {
		message string
		fields  map[string]any
	}{
		"gotoKey": {`tab.goto: unknown key "wait" in options (it takes waitUntil, timeout)`,
			map[string]any{"argument": 2.0, "path": "", "key": "wait", "takes": []any{"waitUntil", "timeout"}}},
		"gotoTypo": {`tab.goto: unknown key "waitUnitl" in options (it takes waitUntil, timeout); did you mean "waitUntil"?`,
			map[string]any{"argument": 2.0, "path": "", "key": "waitUnitl", "takes": []any{"waitUntil", "timeout"}, "closest": "waitUntil"}},
		"gotoType": {"tab.goto: options.timeout must be a number, not a string",
			map[string]any{"argument": 2.0, "path": ".timeout", "want": "a number", "got": "a string"}},
		"textTarget": {`tab.text: unknown key "lable" in target (it takes ` + joinAny(targetKeys) + `); a target is one of`,
			map[string]any{"argument": 1.0, "path": "", "key": "lable", "takes": targetKeys, "closest": "label"}},
		"waitForTarget": {`tab.waitFor: unknown key "Label" in target`,
			map[string]any{"argument": 1.0, "path": "", "key": "Label", "takes": targetKeys, "closest": "label"}},
		"clickTypo": {`tab.click: unknown key "dryrun" in options (it takes dryRun, parts, timeout, modifiers, position, button, clickCount); did you mean "dryRun"?`,
			map[string]any{"argument": 2.0, "path": "", "key": "dryrun", "closest": "dryRun",
				"takes": []any{"dryRun", "parts", "timeout", "modifiers", "position", "button", "clickCount"}}},
		"fillNested": {"tab.fill: target.label must be a string, not a number; a target is one of",
			map[string]any{"argument": 1.0, "path": ".label", "want": "a string", "got": "a number"}},
		"pressNested": {`tab.press: unknown key "rol" in options.target`,
			map[string]any{"argument": 2.0, "path": ".target", "key": "rol", "takes": targetKeys, "closest": "role"}},
		"pressList": {"tab.press: options.modifiers[1] must be a string, not a number",
			map[string]any{"argument": 2.0, "path": ".modifiers[1]", "want": "a string", "got": "a number"}},
		"fillValue": {"tab.fill: argument 2 must be a string, not a number",
			map[string]any{"argument": 2.0, "path": "", "want": "a string", "got": "a number"}},
		"dialogTypo": {`tab.onDialog: confirm: unknown key "promptTxt" in answer (it takes accept, promptText)`,
			map[string]any{"argument": 1.0, "path": ".confirm", "key": "promptTxt", "takes": []any{"accept", "promptText"}, "closest": "promptText"}},
		"openTypo": {`tabs.open: unknown key "backgroud" in options (it takes background, timeout, seq); did you mean "background"?`,
			map[string]any{"argument": 2.0, "path": "", "key": "backgroud", "takes": []any{"background", "timeout", "seq"}, "closest": "background"}},
		"openType": {"tabs.open: options.background must be true or false, not a string",
			map[string]any{"argument": 2.0, "path": ".background", "want": "true or false", "got": "a string"}},
		"uiTypo": {`ui.open: unknown key "splt" in options (it takes split); did you mean "split"?`,
			map[string]any{"argument": 2.0, "path": "", "key": "splt", "takes": []any{"split"}, "closest": "split"}},
		"progressTypo": {`context.progress: unknown key "fracton" in the report (it takes message, fraction); did you mean "fraction"?`,
			map[string]any{"argument": 1.0, "path": "", "key": "fracton", "takes": []any{"message", "fraction"}, "closest": "fraction"}},
		// Through the SDK: the fields are the error's own.
		"notifyType": {"ui.notify: options.level must be a string, not a number",
			map[string]any{"argument": 2.0, "path": ".level", "want": "a string", "got": "a number"}},
	} {
		got, ok := res[name]
		if !assert.True(t, ok, "%s: no outcome in %v", name, res) {
			continue
		}
		assert.Equal(t, "invalid", got.Code, name)
		assert.True(t, strings.HasPrefix(got.Message, want.message), "%s: %q", name, got.Message)
		for k, v := range want.fields {
			assert.Equal(t, v, got.Fields[k], "%s: %s", name, k)
		}
		for _, k := range []string{"key", "closest", "want"} {
			if _, ok := want.fields[k]; !ok {
				assert.Nil(t, got.Fields[k], "%s: %s", name, k)
			}
		}
		assert.Equal(t, "TypeError", got.Name, name)
	}
}

// joinAny joins keys as the host lists them.
func joinAny(keys []any) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.(string)
	}
	return strings.Join(s, ", ")
}
