# Lets `nbgrader ...` run from the repository root; the configuration lives in course/.
load_subconfig("course/nbgrader_config.py")  # noqa: F821 (provided by nbgrader)
