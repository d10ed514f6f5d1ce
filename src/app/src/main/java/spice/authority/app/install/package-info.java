/**
 * Per-user install and uninstall of the app-image ({@code spice-authority install --user},
 * {@code uninstall --user}): copies the app-image to the platform's per-user program location,
 * registers the helper to run at login (systemd user unit, launchd agent, scheduled task) and keeps
 * a manifest of every file it wrote with its SHA-256, so that it never overwrites nor removes
 * anything it did not write.
 */
package spice.authority.app.install;
