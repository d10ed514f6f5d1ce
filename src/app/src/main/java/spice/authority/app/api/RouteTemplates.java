package spice.authority.app.api;

import java.util.ArrayList;
import java.util.List;

/**
 * Maps a request path to the API route template it matched ({@code /v1/runs/{run_id}}), for metric
 * labels. Requests carry caller-chosen paths; a label must never be one, or every distinct path
 * would add a series. The templates are the {@code paths} of the OpenAPI document generated from
 * the resource annotations at build time, so they cannot drift from the routes.
 */
final class RouteTemplates {
    /** The label of a path no template matches, answered 404. */
    static final String NOT_FOUND = "NOT_FOUND";
    /** The label of any other path no template matches. */
    static final String UNKNOWN = "UNKNOWN";

    private final List<String[]> templates;
    private final List<String> names;

    /**
     * Templates are tried most literal segments first (as JAX-RS matches: {@code /v1/runs/active}
     * before {@code /v1/runs/{run_id}}), then in the given order.
     */
    RouteTemplates(List<String> templates) {
        List<String> sorted = new ArrayList<>(templates);
        for (String t : sorted) {
            if (!t.startsWith("/")) {
                throw new IllegalArgumentException("route template must start with '/': " + t);
            }
        }
        sorted.sort(java.util.Comparator.comparingInt(RouteTemplates::literalSegments).reversed());
        this.names = List.copyOf(sorted);
        this.templates = new ArrayList<>(sorted.size());
        for (String t : sorted) {
            this.templates.add(t.substring(1).split("/", -1));
        }
    }

    private static int literalSegments(String template) {
        int n = 0;
        for (String segment : template.substring(1).split("/", -1)) {
            if (!isVariable(segment)) {
                n++;
            }
        }
        return n;
    }

    private static boolean isVariable(String segment) {
        return segment.length() > 2 && segment.startsWith("{") && segment.endsWith("}");
    }

    /** The templates of the OpenAPI document as built ({@link OpenApiDocument}). */
    static RouteTemplates fromOpenApi() {
        byte[] doc = OpenApiDocument.document(OpenApiDocument.RESOURCE + ".json");
        return new RouteTemplates(Json.memberNames(doc, "paths"));
    }

    /**
     * The template {@code path} matches: literal segments equal, each {@code {name}} segment one
     * non-empty segment. Otherwise {@link #NOT_FOUND} for a 404 answer, else {@link #UNKNOWN}.
     */
    String label(String path, int status) {
        String[] segments = path.startsWith("/") ? path.substring(1).split("/", -1) : null;
        if (segments != null) {
            for (int i = 0; i < templates.size(); i++) {
                if (matches(templates.get(i), segments)) {
                    return names.get(i);
                }
            }
        }
        return status == 404 ? NOT_FOUND : UNKNOWN;
    }

    private static boolean matches(String[] template, String[] segments) {
        if (template.length != segments.length) {
            return false;
        }
        for (int i = 0; i < template.length; i++) {
            String t = template[i];
            if (isVariable(t) ? segments[i].isEmpty() : !t.equals(segments[i])) {
                return false;
            }
        }
        return true;
    }
}
