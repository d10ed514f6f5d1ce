/** JMH benchmarks for spice-authority; run with {@code bench/run}. */
package spice.authority.bench;
