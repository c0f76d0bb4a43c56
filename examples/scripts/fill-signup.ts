// Tranquil automation. How to write one: ../../runner/sdk/writing-automations.md
// @permissions browser forms sites=127.0.0.1,localhost
//
// Fills in the demo site's sign-up form by its labels, as a person would
// type it, and reports what the page's own validation said. The first
// email is wrong on purpose, to show how a rejected field reads.
import { context, NotCommittedError, tabs } from "tranquil/automation";

const tab = await tabs.active();
const page = await tab.goto(new URL("signup.html", await tab.url()).href);
if (page.status !== 200) throw new Error(`the sign-up page answered ${page.status}`);

const wrong = await tab.fill({ label: "Email" }, "ada@");
console.log(`"ada@" → invalid: ${wrong.invalid}, the page says: ${wrong.errorText}`);

await tab.fill({ label: "Full name" }, "Ada Lovelace");
const email = await tab.fill({ label: "Email" }, "ada@example.com");
await tab.fill({ label: "Password" }, "analytical-engine");

// The invite code field keeps only trusted typing; fill types, so it holds.
let invite: string;
try {
  invite = (await tab.fill({ label: "Invite code" }, "ABCD-1234")).value;
} catch (e) {
  if (!(e instanceof NotCommittedError)) throw e;
  invite = `not kept (the field holds "${e.kept}")`;
}

await tab.select({ label: "Plan" }, "Team");
await tab.check({ label: "I accept the terms" });

const arrived = tab.waitForNavigation(); // before the click that navigates
await tab.click({ role: "button", name: "Create account" });
await arrived;

const landed = new URL(await tab.url());
console.log(`signed up; now on ${landed.pathname}`);
await context.result({
  rejected: { value: "ada@", invalid: wrong.invalid, errorText: wrong.errorText },
  accepted: { value: email.value, invalid: email.invalid },
  invite,
  landedOn: landed.pathname,
  greeting: `Welcome, ${landed.searchParams.get("name")}`,
  plan: landed.searchParams.get("plan"),
});
