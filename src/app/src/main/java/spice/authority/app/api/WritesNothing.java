package spice.authority.app.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a resource method that writes nothing durable on any path (it may change only what the
 * helper holds in memory: a session, a prepared import). An unexpected failure in it is answered
 * {@code 503 unavailable} ("nothing was written, retry"), never {@code uncertain}: the caller
 * can know that nothing took effect on disk (see {@link ProblemMappers#fatal}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface WritesNothing {}
