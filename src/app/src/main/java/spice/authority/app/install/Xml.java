package spice.authority.app.install;

/** XML text escaping for the generated plist and task files. */
final class Xml {
    private Xml() {}

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;").replace("'", "&apos;");
    }
}
