// React and its kin read process.env.NODE_ENV; a browser has no process.
// This module is imported first so that it runs before them.
globalThis.process ??= { env: { NODE_ENV: "production" } };
