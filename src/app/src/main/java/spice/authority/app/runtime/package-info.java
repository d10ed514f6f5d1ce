/**
 * What the running helper holds, reached by injection: the context {@code serve} prepared before
 * Quarkus started ({@link spice.authority.app.runtime.ServeContextProducer}), the helper's
 * settings and the request gate. Depends on no other package of the application.
 */
package spice.authority.app.runtime;
