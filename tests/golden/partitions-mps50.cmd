report --color never --baseline samples/partitions/traces/solo samples/partitions/traces/mps50-n2
