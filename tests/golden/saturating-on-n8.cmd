report --color never --baseline samples/saturating/traces/mps-on/n1 samples/saturating/traces/mps-on/n8
