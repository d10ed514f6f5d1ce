/** The helper application: CLI (picocli) and, later, the HTTP API. */
package spice.authority.app;
