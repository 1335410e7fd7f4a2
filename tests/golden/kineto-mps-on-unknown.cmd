report --color never --baseline tests/verdicts/solo-kineto tests/verdicts/kineto-mps-on
