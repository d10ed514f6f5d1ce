/**
 * What every command shares, whichever package holds it ({@code cli}, {@code serve},
 * {@code install}): the exit codes, the one parser of {@code --listen HOST:PORT} and the default
 * endpoint location. Depends on no other package of the application.
 */
package spice.authority.app.command;
