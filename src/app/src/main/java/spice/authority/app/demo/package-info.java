/**
 * {@code spice-authority demo}: real host processes of the scripted agent (the host library's
 * {@code DemoHost}) against a helper, one killed with SIGKILL and its run recovered by another.
 * Depends on the host library only; nothing of the helper's packages.
 */
package spice.authority.app.demo;
