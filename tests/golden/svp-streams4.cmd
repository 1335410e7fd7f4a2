report --color never samples/streams_vs_processes/traces/streams4
