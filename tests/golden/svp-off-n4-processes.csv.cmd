report --format csv --table processes samples/streams_vs_processes/traces/mps-off/n4
