"""`create_react_agent`'s model side: `response_format`, model strings, the chat-model protocol.

The `response_format` scenarios were first run with LangGraph 1.2.22 + langchain-core
1.8.3 (a `BaseChatModel` fake whose `with_structured_output` records the messages it is
given): same nodes, same updates, same messages given to the structured-output model
(the system prompt of the `(prompt, schema)` form first). LangGraph refuses a
response_format model without `with_structured_output` at run time with "Expected
`model` to be a ChatModel or RunnableBinding (e.g. model.bind_tools(...)), got <class
...>"; lgembed raises the same text (plus the protocol) when the agent is created.

Tests named `test_lgembed_*` pin lgembed-only behaviour: the errors for model objects of
the wrong shape (LangGraph fails inside the task with a bare TypeError/AttributeError)
and "provider:model" strings (LangGraph needs langchain's init_chat_model).
"""

import asyncio
import re
import subprocess
import sys
import types
import warnings
from typing import TypedDict

import pytest

from lgembed.messages import AIMessage, HumanMessage
from lgembed.prebuilt import create_react_agent
from lgembed.prebuilt._agent_model import PROTOCOL
from lgembed.warnings import LangGraphDeprecatedSinceV10, LangGraphDeprecationWarning

pytestmark = pytest.mark.filterwarnings("ignore::lgembed.warnings.LangGraphDeprecationWarning")


class Out(TypedDict):
    answer: str


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Model:
    """A chat model with the whole protocol: invoke, bind_tools, with_structured_output."""

    def __init__(self, responses):
        self.responses = list(responses)
        self.i = 0
        self.bound_tools = None
        self.structured_seen = []

    def invoke(self, messages):
        r = self.responses[self.i]
        self.i += 1
        return r

    def bind_tools(self, tools):
        self.bound_tools = [getattr(t, "name", t) for t in tools]
        return self

    def with_structured_output(self, schema):
        outer = self

        class Structured:
            def invoke(self, messages):
                outer.structured_seen.append([(m.type, m.content) for m in messages])
                return {"answer": "42", "schema": getattr(schema, "__name__", "dict"), "n": len(messages)}

            async def ainvoke(self, messages):
                return {"answer": "async", "n": len(messages)}

        return Structured()


def tool_round():
    return [
        AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}], id="a1"),
        AIMessage("three", id="a2"),
    ]


def updates(agent, inp):
    return [{k: sorted(v) for k, v in ch.items()} for ch in agent.stream(inp, stream_mode="updates")]


# --- response_format (observed with LangGraph) --------------------------------------


@pytest.mark.parametrize(
    ("response_format", "first"),
    [
        (Out, []),
        (("Be terse.", Out), [("system", "Be terse.")]),
        ({"title": "Out", "type": "object", "properties": {"answer": {"type": "string"}}}, []),
    ],
)
def test_response_format_with_tools(response_format, first):
    model = Model(tool_round())
    agent = create_react_agent(model, [add], response_format=response_format)
    assert list(agent.nodes) == ["__start__", "agent", "tools", "generate_structured_response"]
    assert updates(agent, {"messages": [HumanMessage("hi", id="h")]}) == [
        {"agent": ["messages"]},
        {"tools": ["messages"]},
        {"agent": ["messages"]},
        {"generate_structured_response": ["structured_response"]},
    ]
    assert model.structured_seen[-1] == [*first, ("human", "hi"), ("ai", ""), ("tool", "3"), ("ai", "three")]


def test_response_format_without_tools_and_state_keys():
    model = Model([AIMessage("plain", id="a3")])
    agent = create_react_agent(model, [], response_format=("SYS", Out))
    assert list(agent.nodes) == ["__start__", "agent", "generate_structured_response"]
    out = agent.invoke({"messages": [HumanMessage("hi", id="h")]})
    assert sorted(out) == ["messages", "structured_response"]
    assert out["structured_response"] == {"answer": "42", "schema": "Out", "n": 3}
    assert model.structured_seen[-1] == [("system", "SYS"), ("human", "hi"), ("ai", "plain")]


def test_response_format_async_uses_ainvoke():
    model = Model([AIMessage("plain", id="a3")])
    out = asyncio.run(create_react_agent(model, [add], response_format=Out).ainvoke({"messages": [HumanMessage("hi")]}))
    assert out["structured_response"] == {"answer": "async", "n": 2}


def test_response_format_with_a_dynamic_model():
    model = Model([AIMessage("plain", id="a3")])
    agent = create_react_agent(lambda state, runtime: model, [], response_format=Out)
    assert agent.invoke({"messages": [HumanMessage("hi")]})["structured_response"]["schema"] == "Out"


class InvokeOnly:
    def invoke(self, messages):
        return AIMessage("hi", id="x")


def test_response_format_model_without_with_structured_output():
    """LangGraph's text (at run time there; at create time here), then the protocol."""
    expected = (
        "Expected `model` to be a ChatModel or RunnableBinding (e.g. model.bind_tools(...)), got "
        f"{InvokeOnly}. lgembed: response_format needs a model with with_structured_output(schema), which "
        "returns an object whose invoke(messages) gives the structured response (lgembed.models.ChatOpenAI has it)."
    )
    with pytest.raises(TypeError) as info:
        create_react_agent(InvokeOnly(), [], response_format=Out)
    assert str(info.value) == expected
    # a dynamic model is only known at run time, as in LangGraph
    agent = create_react_agent(lambda state, runtime: InvokeOnly(), [], response_format=Out)
    with pytest.raises(TypeError) as info:
        agent.invoke({"messages": [HumanMessage("hi")]})
    assert str(info.value) == expected


# --- the deprecation warning --------------------------------------------------------


def test_lgembed_deprecation_warning_says_what_lgembed_offers():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        create_react_agent(Model([AIMessage("x")]), [add])
    assert [w.category for w in rec] == [LangGraphDeprecatedSinceV10]
    assert issubclass(rec[0].category, LangGraphDeprecationWarning)
    assert str(rec[0].message) == (
        "create_react_agent has been moved to `langchain.agents` in LangGraph 1.x (as `create_agent`). "
        "lgembed does not ship `langchain.agents`: keep importing `create_react_agent` from `lgembed.prebuilt`, "
        "which lgembed supports. Deprecated in LangGraph V1.0 to be removed in V2.0."
    )
    assert rec[0].filename == __file__


def test_lgembed_warning_filter_written_for_langgraph_still_matches():
    """A filter on LangGraph's first words silences lgembed's warning too."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="create_react_agent has been moved to `langchain.agents`")
        create_react_agent(Model([AIMessage("x")]), [add])
    assert rec == []


# --- model objects of the wrong shape ------------------------------------------------


def test_lgembed_not_a_model_at_create_time():
    with pytest.raises(TypeError) as info:
        create_react_agent(42, [])
    assert str(info.value) == f"create_react_agent(model=...): got int 42, which has no invoke() and is not callable. {PROTOCOL}"


def test_lgembed_model_class_instead_of_instance():
    with pytest.raises(TypeError) as info:
        create_react_agent(Model, [add])
    assert str(info.value) == (
        f"create_react_agent(model=Model): got the class, not a model object; create one, e.g. Model(...). {PROTOCOL}"
    )


def test_lgembed_plain_function_as_model_at_create_time():
    """A new user's `def model(messages)`: a function is a dynamic model(state, runtime)."""

    def my_model(messages):
        return AIMessage("hi")

    with pytest.raises(TypeError) as info:
        create_react_agent(my_model, [add])
    assert str(info.value) == (
        "create_react_agent(model=my_model): a callable without invoke() is a dynamic model, called as "
        "model(state, runtime) to get the chat model for each step, but my_model(messages) cannot take "
        "(state, runtime). To use a function as the chat model itself, give it the chat-model shape "
        f"(an object with invoke). {PROTOCOL}"
    )


class ReturnsDict:
    def invoke(self, messages):
        return {"role": "assistant", "content": "hi"}

    async def ainvoke(self, messages):
        return "hi"


def test_lgembed_model_returning_a_dict():
    agent = create_react_agent(ReturnsDict(), [])
    with pytest.raises(TypeError) as info:
        agent.invoke({"messages": [HumanMessage("hi")]})
    assert str(info.value) == (
        "create_react_agent: the model's invoke(messages) returned dict {'role': 'assistant', 'content': 'hi'}, "
        "not a message: it must return an AIMessage (lgembed.messages.AIMessage or langchain-core's), with "
        f"tool_calls to call tools, e.g. AIMessage(content='...'). {PROTOCOL}"
    )
    with pytest.raises(TypeError, match=re.escape("returned str 'hi', not a message")):
        asyncio.run(agent.ainvoke({"messages": [HumanMessage("hi")]}))


def test_lgembed_dynamic_model_returning_a_non_model():
    def pick_model(state, runtime):
        return "gpt-4o"

    agent = create_react_agent(pick_model, [])
    with pytest.raises(TypeError) as info:
        agent.invoke({"messages": [HumanMessage("hi")]})
    assert str(info.value).startswith(
        "create_react_agent: the dynamic model pick_model(state, runtime) returned str 'gpt-4o', not a chat "
        "model: it must return an object with invoke(messages) returning an AIMessage"
    )

    async def apick(state, runtime):
        return None

    with pytest.raises(TypeError, match=re.escape("the dynamic model apick(state, runtime) returned NoneType None")):
        asyncio.run(create_react_agent(apick, []).ainvoke({"messages": [HumanMessage("hi")]}))


def test_lgembed_long_values_are_cut_in_errors():
    class Big:
        def invoke(self, messages):
            return list(range(1000))

    with pytest.raises(TypeError) as info:
        create_react_agent(Big(), []).invoke({"messages": [HumanMessage("hi")]})
    assert "returned list [0, 1, 2," in str(info.value)
    assert "..., not a message" in str(info.value)
    assert len(str(info.value)) < 1200


# --- "provider:model" strings --------------------------------------------------------


@pytest.fixture
def fake_models(monkeypatch):
    """`lgembed.models` replaced by a module whose ChatOpenAI records its arguments."""
    made = []

    class ChatOpenAI(Model):
        def __init__(self, **kwargs):
            super().__init__([AIMessage("from openai", id="o1")])
            self.kwargs = kwargs
            made.append(self)

    module = types.ModuleType("lgembed.models")
    module.ChatOpenAI = ChatOpenAI
    monkeypatch.setitem(sys.modules, "lgembed.models", module)
    return made


@pytest.mark.parametrize(("spec", "name"), [("openai:gpt-4o-mini", "gpt-4o-mini"), ("gpt-4o-mini", "gpt-4o-mini"), ("openai:qwen2.5:7b", "qwen2.5:7b")])
def test_lgembed_openai_string_resolves_to_chat_openai(fake_models, spec, name):
    agent = create_react_agent(spec, [add])
    assert [m.kwargs for m in fake_models] == [{"model": name}]
    assert fake_models[0].bound_tools == ["add"]
    assert agent.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].content == "from openai"


FIX = (
    "Pass a model object instead: lgembed.models.ChatOpenAI(base_url=..., model=...) talks to any "
    "OpenAI-compatible server (llama.cpp's server, Ollama, vLLM, LM Studio), or any object with "
    "invoke(messages) returning an AIMessage."
)


def test_lgembed_other_providers_are_refused(fake_models):
    with pytest.raises(ValueError) as info:
        create_react_agent("anthropic:claude-3-7-sonnet-latest", [])
    assert str(info.value) == (
        "create_react_agent(model='anthropic:claude-3-7-sonnet-latest'): lgembed resolves only 'openai:MODEL' "
        "strings (to lgembed.models.ChatOpenAI); provider 'anthropic' needs langchain's init_chat_model and its "
        f"integration package, which lgembed does not use. {FIX}"
    )
    with pytest.raises(ValueError) as info:
        create_react_agent("llama3:8b", [])
    assert str(info.value) == (
        "create_react_agent(model='llama3:8b'): cannot tell the model provider from this string; lgembed "
        f"resolves only 'openai:MODEL' strings (and OpenAI model names). {FIX}"
    )
    assert fake_models == []


def test_lgembed_openai_string_without_lgembed_models(monkeypatch):
    monkeypatch.setitem(sys.modules, "lgembed.models", None)
    with pytest.raises(ImportError) as info:
        create_react_agent("openai:gpt-4o-mini", [])
    assert str(info.value) == (
        "create_react_agent(model='openai:gpt-4o-mini'): 'openai:MODEL' strings resolve to "
        "lgembed.models.ChatOpenAI, which this lgembed does not have. Pass a model object with "
        "invoke(messages) returning an AIMessage."
    )


def test_lgembed_prebuilt_does_not_import_models():
    code = "import sys, lgembed.prebuilt; print('lgembed.models' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
