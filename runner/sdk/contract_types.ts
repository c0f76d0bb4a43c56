// The object types of the host API as contract.json describes them, for
// contract_test.ts to hold the SDK's own types to. Generated with
// go test ./runner -run TestContractIsCurrent -update; do not edit.

export interface ClickOptions {
  dryRun?: boolean;
  parts?: Record<string, string>;
  timeout?: number;
  modifiers?: string[];
  position?: Position;
  button?: string;
  clickCount?: number;
}

export interface DblclickOptions {
  dryRun?: boolean;
  parts?: Record<string, string>;
  timeout?: number;
  modifiers?: string[];
  position?: Position;
  button?: string;
}

export interface DialogAnswer {
  accept?: boolean;
  promptText?: string;
}

export interface DialogAnswers {
  alert?: "accept" | "dismiss" | DialogAnswer;
  confirm?: "accept" | "dismiss" | DialogAnswer;
  prompt?: "accept" | "dismiss" | DialogAnswer;
  beforeunload?: "accept" | "dismiss" | DialogAnswer;
}

export interface DownloadOptions {
  path?: string;
  overwrite?: boolean;
  timeout?: number;
}

export interface DownloadResult {
  name?: string;
  size?: number;
  path?: string;
}

export interface Expectation {
  kind?: string;
  text?: string;
  pattern?: TextPattern;
  count?: number;
  name?: string;
  not?: boolean;
  timeout?: number;
}

export interface FieldState {
  value?: string;
  invalid?: boolean;
  validationMessage?: string;
  errorText?: string;
}

export interface FormOptions {
  dryRun?: boolean;
  parts?: Record<string, string>;
  timeout?: number;
}

export interface HoverOptions {
  dryRun?: boolean;
  parts?: Record<string, string>;
  timeout?: number;
  modifiers?: string[];
  position?: Position;
}

export interface Locator {
  label?: string;
  placeholder?: string;
  name?: string;
  role?: string;
  text?: string;
  selector?: string;
  testId?: string;
  ref?: string;
  exact?: boolean;
  frame?: string;
  within?: Locator;
  hasText?: string;
  has?: Locator;
  nth?: number;
}

export interface NavigationOptions {
  waitUntil?: string;
  timeout?: number;
}

export interface NotifyOptions {
  level?: string;
}

export interface OpenOptions {
  split?: string;
}

export interface OpenTabOptions {
  background?: boolean;
  timeout?: number;
  seq?: number;
}

export interface Position {
  x?: number;
  y?: number;
}

export interface PressOptions {
  dryRun?: boolean;
  parts?: Record<string, string>;
  timeout?: number;
  target?: Locator;
  modifiers?: string[];
}

export interface ProgressEvent {
  message?: string;
  fraction?: number;
}

export interface ReadOptions {
  timeout?: number;
}

export interface Response {
  status?: number;
  url?: string;
}

export interface ScreenshotOptions {
  fullPage?: boolean;
}

export interface StepEvent {
  name?: string;
  kind?: string;
  phase?: string;
  attempt?: number;
  ok?: boolean;
  error?: string;
}

export interface TabInfo {
  id?: string;
  url?: string;
  title?: string;
}

export interface Table {
  headers?: string[];
  rows?: string[][];
}

export interface TextPattern {
  source?: string;
  flags?: string;
}

export interface TypeOptions {
  dryRun?: boolean;
  parts?: Record<string, string>;
  timeout?: number;
  delay?: number;
}

export interface UrlMatch {
  url?: string;
  pattern?: TextPattern;
}

export interface WaitForOptions {
  timeout?: number;
  state?: string;
}
