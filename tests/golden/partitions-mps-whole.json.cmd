report --color never --format json --baseline samples/partitions/traces/solo samples/partitions/traces/mps-n2
