/** The SDK's version, sent to the host in the handshake. */
export const SDK_VERSION = "0.1.0";
