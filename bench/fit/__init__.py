"""What fits the models the package ships (the scorer's two sets of trees, the memory policy), held out by call."""
