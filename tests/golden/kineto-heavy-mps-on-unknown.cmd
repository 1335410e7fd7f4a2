report --color never --baseline tests/verdicts/solo-kineto-heavy tests/verdicts/kineto-heavy-mps-on
