package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.contract.ProblemCode;

/**
 * Path segments are decoded by the helper, strictly: what is not UTF-8 is refused, never turned
 * into U+FFFD (which would name another run), and what is UTF-8 gives exactly the text a body with
 * the same bytes gives.
 */
class PathTextTest {
    /** Each breaks UTF-8: invalid bytes, cut sequences, overlong forms, encoded surrogates, past U+10FFFF. */
    static final List<String> NOT_UTF8 = List.of("alias-%FF", "alias-%C3", "alias-%F0%9F", "alias-%ED%A0%80",
            "alias-%ED%B0%80", "alias-%ED%A0%BD%ED%B8%80", "alias-%80", "alias-%C0%AF", "alias-%E0%80%AF",
            "alias-%F4%90%80%80", "alias-%F8%88%80%80%80", "alias-%C3%28", "alias-\u00ff", "alias-\u00c3");

    @Test
    void notUtf8_isRefused_namingTheRule() {
        List<String> accepted = new ArrayList<>();
        for (String raw : NOT_UTF8) {
            if (PathText.decodeOrNull(raw) != null) {
                accepted.add(raw);
            }
            assertThat(PathText.isValidPath("/v1/runs/" + raw + "/lease")).as(raw).isFalse();
        }
        assertThat(accepted).as("accepted although not UTF-8").isEmpty();
        assertThatThrownBy(() -> PathText.decode("alias-%ED%A0%80")).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo(ProblemCode.INVALID_REQUEST);
            assertThat(e.getMessage()).isEqualTo(PathText.RULE);
        });
    }

    @Test
    void malformedEscapes_areRefused() {
        for (String raw : List.of("a%", "a%4", "a%G1", "a%4G", "a%\u0664\u0661")) {
            assertThat(PathText.decodeOrNull(raw)).as(raw).isNull();
        }
    }

    @Test
    void utf8_decodesToTheTextABodyWithTheSameBytesGives() {
        for (String text : List.of("run-1", "job-\u00e9", "job-\u0430", "alias-\ufffd", "\ud83d\ude42", "a/b", "a b", "a+b", "100%")) {
            StringBuilder raw = new StringBuilder();
            for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
                raw.append(String.format("%%%02X", b & 0xFF));
            }
            assertThat(PathText.decode(raw.toString())).as(text).isEqualTo(text);
        }
        assertThat(PathText.decode("job-%c3%a9")).isEqualTo("job-\u00e9");
        assertThat(PathText.decode("alias-%EF%BF%BD")).isEqualTo("alias-\ufffd");
        // Raw bytes beyond ASCII, as the HTTP decoder hands them over (one ISO 8859-1 character each).
        assertThat(PathText.decode("job-\u00c3\u00a9")).isEqualTo("job-\u00e9");
        assertThat(PathText.decode("a+b")).isEqualTo("a+b");
        assertThat(PathText.isValidPath("/v1/runs/job-%C3%A9/lease")).isTrue();
        assertThat(PathText.isValidPath("/")).isTrue();
    }
}
