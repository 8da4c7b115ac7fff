"""compile, exec and eval inline are CPU-heavy (medium)."""


async def load_port(source, expression):
    code = compile(source, "<port>", "exec")  # expect: medium compile
    namespace = {}
    exec(code, namespace)  # expect: medium exec
    return eval(expression, namespace)  # expect: medium eval
