"""The lab: scenarios (TOML walkthroughs), generated workloads, the limits a run must stay
under, running a scenario (`simulate`) and comparing configurations."""
