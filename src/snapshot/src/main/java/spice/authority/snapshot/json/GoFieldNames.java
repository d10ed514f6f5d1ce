package spice.authority.snapshot.json;

/**
 * Go's {@code encoding/json} struct field lookup: exact name first, then a match equivalent to
 * {@code bytes.EqualFold} (Unicode simple folding). For field names made of lowercase ASCII
 * letters and underscores, only ASCII letters, U+017F (folds to S) and U+212A (folds to K) can
 * match case-insensitively.
 */
public final class GoFieldNames {
    private GoFieldNames() {}

    /** Index of the field {@code key} selects, or -1 when it names none. */
    public static int match(String key, String[] fields) {
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].equals(key)) {
                return i;
            }
        }
        for (int i = 0; i < fields.length; i++) {
            if (foldEquals(key, fields[i])) {
                return i;
            }
        }
        return -1;
    }

    /** Case-insensitive equality of a decoded key and a lowercase ASCII field name. */
    public static boolean foldEquals(String key, String field) {
        int k = 0;
        int f = 0;
        while (k < key.length() && f < field.length()) {
            int c = key.codePointAt(k);
            k += Character.charCount(c);
            int folded;
            if (c >= 'a' && c <= 'z') {
                folded = c - 32;
            } else if (c == 0x017F) {
                folded = 'S';
            } else if (c == 0x212A) {
                folded = 'K';
            } else {
                folded = c;
            }
            int fc = field.charAt(f++);
            if (fc >= 'a' && fc <= 'z') {
                fc -= 32;
            }
            if (folded != fc) {
                return false;
            }
        }
        return k == key.length() && f == field.length();
    }
}
