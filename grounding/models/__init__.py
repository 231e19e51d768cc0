"""Weights shipped with groundeval (the example dice detector) and the script that trains them."""
