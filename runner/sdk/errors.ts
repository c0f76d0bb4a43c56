// Errors the SDK throws. Each has its own name, so a script (or a test) can
// tell them apart with instanceof or by err.name.

/**
 * NotGrantedError is thrown by a call to a host API the script's header does
 * not permit. The message names the @permissions key that would grant it.
 */
export class NotGrantedError extends Error {
  /** The host capability that is missing, such as "clipboard". */
  readonly capability: string;
  /** The @permissions key that grants it, such as "clipboard" or "browser"; undefined for APIs every run gets. */
  readonly permission: string | undefined;

  constructor(api: string, capability: string, permission: string | undefined) {
    super(
      permission === undefined
        ? `${api} is not available: the host did not provide "${capability}" to this run`
        : `${api} is not granted to this script: add "${permission}" to its // @permissions line`,
    );
    this.name = "NotGrantedError";
    this.capability = capability;
    this.permission = permission;
  }
}

/** NoHostError is thrown when the SDK is used outside a run and no fake host is installed. */
export class NoHostError extends Error {
  constructor() {
    super(
      "tranquil/automation is not connected to a host: run this script from the app, " +
        "or call installFakeHost() from tranquil/automation/testing in a test",
    );
    this.name = "NoHostError";
  }
}

/** CancelledError is the reason context.signal carries when the run is cancelled. */
export class CancelledError extends Error {
  constructor(reason: string) {
    super(reason || "the run was cancelled");
    this.name = "CancelledError";
  }
}

/**
 * TerminalError, thrown from a step.do function, fails the step at once:
 * it is never retried.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/** StepTimeoutError reports a step attempt, or a wait for an event, that ran out of time. */
export class StepTimeoutError extends Error {
  /** The step's name. */
  readonly step: string;
  /** The limit that was reached, in milliseconds. */
  readonly timeout: number;

  constructor(step: string, timeout: number) {
    super(`step "${step}" timed out after ${timeout} ms`);
    this.name = "StepTimeoutError";
    this.step = step;
    this.timeout = timeout;
  }
}
