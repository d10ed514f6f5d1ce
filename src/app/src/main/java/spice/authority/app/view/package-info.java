/**
 * Views shared by the CLI and the HTTP API: the structural view of an envelope and its JSON text.
 * Depends on no other package of the application.
 */
package spice.authority.app.view;
