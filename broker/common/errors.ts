// Error classes shared across broker folders. In common (not in server/) so
// handlers can raise them without handlers/ and server/ importing each other.

/** Thrown by a processor to ask for the connection to be closed (Kafka's answer to unparseable requests). */
export class CloseConnectionError extends Error {}
