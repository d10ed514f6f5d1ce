package spice.authority.app.api;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/** The resource classes of the HTTP API v1, split by route group. */
final class ResourceClasses {
    static final List<Class<?>> V1 = List.of(SessionResources.class, AuthorityResources.class, RunResources.class,
            ImportResources.class);

    private ResourceClasses() {}

    /** Every declared method of the v1 resource classes. */
    static Stream<Method> methods() {
        return V1.stream().flatMap(c -> Arrays.stream(c.getDeclaredMethods()));
    }

    /** The public resource method {@code name}. */
    static Method method(String name) {
        return methods().filter(m -> m.getName().equals(name) && Modifier.isPublic(m.getModifiers()))
                .findFirst().orElseThrow(() -> new AssertionError("no resource method " + name));
    }
}
