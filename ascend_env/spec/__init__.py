"""The truth layer: the EnvSpec model, the compatibility matrix, naming, catalogue and plan."""
