report --color never samples/saturating/traces/mps-on/n8
