import os

pytest_plugins = ["pytester"]

# every result the code under test writes (in this process and in the CLI subprocesses the
# tests start, which inherit the environment) is validated against its kind's model
# (agentverity_props.results): a producer whose JSON drifts from the published schema fails
os.environ.setdefault("AGENTVERITY_PROPS_VALIDATE_RESULTS", "1")
