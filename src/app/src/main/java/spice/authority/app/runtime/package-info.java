/**
 * What the running helper holds, reached by injection: what {@code serve} prepared before
 * Quarkus started, one bean each ({@link spice.authority.app.runtime.ServeProducers}), the helper's
 * settings and the request gate. Depends on no other package of the application.
 */
package spice.authority.app.runtime;
