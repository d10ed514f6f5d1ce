package spice.authority.host;

import java.time.Duration;
import java.util.Objects;

/**
 * How often a call is sent again when the helper's answer proves nothing happened: {@code unavailable},
 * {@code busy} with a {@code Retry-After} or for a quota ({@code 429}), or no connection at all
 * (nothing was sent). Never on
 * {@code uncertain}, never after a request may have reached the helper without an answer.
 *
 * <p>Backoff doubles from {@code initialBackoff} up to {@code maxBackoff}; a {@code Retry-After}
 * longer than the backoff is honoured up to {@code maxBackoff}.
 *
 * @param maxAttempts attempts in all, at least 1 (1: never retry)
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
    /** Send once; report the first answer. */
    public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO);
    /** Four attempts, 50 ms doubling to at most 1 s between them. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(4, Duration.ofMillis(50), Duration.ofSeconds(1));

    public RetryPolicy {
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new IllegalArgumentException("maxAttempts must be 1..100");
        }
        if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("backoff must be 0 <= initialBackoff <= maxBackoff");
        }
    }

    /** The pause before attempt {@code attempt + 1} (attempt counts from 1). */
    Duration backoff(int attempt, Duration retryAfter) {
        Duration d = initialBackoff;
        for (int i = 1; i < attempt && d.compareTo(maxBackoff) < 0; i++) {
            d = d.multipliedBy(2);
        }
        if (retryAfter != null && retryAfter.compareTo(d) > 0) {
            d = retryAfter;
        }
        return d.compareTo(maxBackoff) > 0 ? maxBackoff : d;
    }
}
