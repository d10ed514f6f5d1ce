/**
 * The helper application: the CLI (picocli) and the HTTP helper (Quarkus). Its packages point one
 * way (docs/design.md; {@code PackageGraphTest}): {@code cli} above {@code serve} and
 * {@code install}; {@code serve} and {@code api} above {@code session}, which is above
 * {@code runtime}; {@code view}, {@code command} and {@code text} at the bottom.
 */
package spice.authority.app;
