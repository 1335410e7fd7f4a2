report --format csv --table windows --baseline samples/saturating/traces/mps-on/n1 samples/saturating/traces/mps-on/n8
