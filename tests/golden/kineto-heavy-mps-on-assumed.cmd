report --color never --assume-mps on --baseline tests/verdicts/solo-kineto-heavy tests/verdicts/kineto-heavy-mps-on
