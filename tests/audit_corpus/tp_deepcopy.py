"""Deep copies: copy.deepcopy by any name, and pydantic's model_copy."""
import copy
from copy import deepcopy as clone


async def snapshot(state, model):
    a = copy.deepcopy(state)  # expect: high copy.deepcopy
    b = clone(state)  # expect: high copy.deepcopy
    c = model.model_copy(deep=True)  # expect: high .model_copy
    return a, b, c
