report --color never --baseline samples/partitions/traces/green1 samples/partitions/traces/green2
