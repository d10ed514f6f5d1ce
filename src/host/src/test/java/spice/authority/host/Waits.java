package spice.authority.host;

import java.util.List;

/** Waits of the tests on a thread's progress, for calls that give no notification when they block. */
public final class Waits {
    private Waits() {
    }

    /**
     * Returns once {@code t} runs in {@code className.methods[0]} called from {@code methods[1]} of
     * the same class, and so on (it is blocked there: in a connect, a read, a pause); fails after
     * 10 s, or at once when {@code t} ended.
     */
    public static void awaitIn(Thread t, String className, String... methods) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!runsIn(t.getStackTrace(), className, List.of(methods))) {
            if (!t.isAlive() || System.nanoTime() - deadline > 0) {
                throw new AssertionError(t.getName() + " never ran in " + className + " " + List.of(methods)
                        + " (alive: " + t.isAlive() + ")");
            }
            Thread.sleep(1); // the poll interval, not a wait for something to happen
        }
    }

    private static boolean runsIn(StackTraceElement[] stack, String className, List<String> methods) {
        for (int i = 0; i + methods.size() <= stack.length; i++) {
            boolean match = true;
            for (int j = 0; j < methods.size() && match; j++) {
                match = stack[i + j].getClassName().equals(className) && stack[i + j].getMethodName().equals(methods.get(j));
            }
            if (match) {
                return true;
            }
        }
        return false;
    }
}
