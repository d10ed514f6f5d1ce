package spice.authority.app.cli;

/** Exit-code sentinel: {@code serve} handed control to Quarkus, which decides the exit code. */
public final class ServeMarker {
    public static final int SERVED = Integer.MIN_VALUE;

    private ServeMarker() {}
}
