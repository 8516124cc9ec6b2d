"""C51 / Rainbow's distributional loss as Dopamine writes it in JAX (google/dopamine,
dopamine/jax/agents/rainbow/rainbow_agent.py: train's loss_fn, target_distribution, project_distribution; and
dopamine/jax/losses.py: softmax_cross_entropy_loss_with_logits), transcribed small: the target distribution of the
target network's greedy action projected onto the support (Eq. 7 of Bellemare et al. 2017) under
jax.lax.stop_gradient, per-state by jax.vmap, the chosen action's logits by a vmapped index, and the
cross-entropy. The Flax network is stubbed as one linear layer giving (actions, atoms) logits; the loss takes
the target parameters so the stopped target is part of it (Dopamine computes it beside loss_fn in train)."""

import collections
import functools

import jax
import jax.numpy as jnp

NetworkType = collections.namedtuple('c51_network', ['q_values', 'logits', 'probabilities'])


def softmax_cross_entropy_loss_with_logits(labels, logits):
  return -jnp.sum(labels * jax.nn.log_softmax(logits))


def network_apply(params, x, support, num_actions=2, num_atoms=5):
  h = jax.nn.relu(x @ params["w1"] + params["b1"])
  logits = (h @ params["w2"]).reshape((num_actions, num_atoms))
  probabilities = jax.nn.softmax(logits)
  q_values = jnp.sum(support * probabilities, axis=1)
  return NetworkType(q_values, logits, probabilities)


def project_distribution(supports, weights, target_support):
  v_min, v_max = target_support[0], target_support[-1]
  # `N` in Eq7.
  num_dims = target_support.shape[-1]
  # delta_z = `\Delta z` in Eq7.
  delta_z = (v_max - v_min) / (num_dims - 1)
  # clipped_support = `[\hat{T}_{z_j}]^{V_max}_{V_min}` in Eq7.
  clipped_support = jnp.clip(supports, v_min, v_max)
  # numerator = `|clipped_support - z_i|` in Eq7.
  numerator = jnp.abs(clipped_support - target_support[:, None])
  quotient = 1 - (numerator / delta_z)
  # clipped_quotient = `[1 - numerator / (\Delta z)]_0^1` in Eq7.
  clipped_quotient = jnp.clip(quotient, 0, 1)
  # inner_prod = `\sum_{j=0}^{N-1} clipped_quotient * p_j(x', \pi(x'))` in Eq7.
  inner_prod = clipped_quotient * weights
  return jnp.squeeze(jnp.sum(inner_prod, -1))


@functools.partial(jax.vmap, in_axes=(None, 0, 0, 0, None, None))
def target_distribution(target_network, next_states, rewards, terminals,
                        support, cumulative_gamma):
  is_terminal_multiplier = 1. - terminals.astype(jnp.float32)
  # Incorporate terminal state to discount factor.
  gamma_with_terminal = cumulative_gamma * is_terminal_multiplier
  target_support = rewards + gamma_with_terminal * support
  next_state_target_outputs = target_network(next_states)
  q_values = jnp.squeeze(next_state_target_outputs.q_values)
  next_qt_argmax = jnp.argmax(q_values)
  probabilities = jnp.squeeze(next_state_target_outputs.probabilities)
  next_probabilities = probabilities[next_qt_argmax]
  return jax.lax.stop_gradient(
      project_distribution(target_support, next_probabilities, support))


def loss(online_params, target_params, states, actions, next_states, rewards, terminals, loss_weights,
         support, cumulative_gamma=0.99):
  def q_target(state):
    return network_apply(target_params, state, support)

  target = target_distribution(q_target, next_states, rewards, terminals, support, cumulative_gamma)

  def loss_fn(params, target):
    def q_online(state):
      return network_apply(params, state, support)

    logits = jax.vmap(q_online)(states).logits
    # Fetch the logits for its selected action. We use vmap to perform this
    # indexing across the batch.
    chosen_action_logits = jax.vmap(lambda x, y: x[y])(logits, actions)
    loss = jax.vmap(softmax_cross_entropy_loss_with_logits)(
        target,
        chosen_action_logits)
    mean_loss = jnp.mean(loss_weights * loss)
    return mean_loss, loss

  return loss_fn(online_params, target)[0]


def _params(seed):
  k = jax.random.split(jax.random.PRNGKey(seed), 3)
  return {"w1": jax.random.normal(k[0], (3, 4)), "b1": jax.random.normal(k[1], (4,)) * 0.1,
          "w2": jax.random.normal(k[2], (4, 10))}


def example():
  k1, k2, k3 = jax.random.split(jax.random.PRNGKey(51), 3)
  return (_params(1), _params(2), jax.random.normal(k1, (4, 3)), jnp.array([1, 0, 0, 1]),
          jax.random.normal(k2, (4, 3)), jax.random.normal(k3, (4,)), jnp.array([0, 0, 1, 0]),
          jnp.ones((4,)), jnp.linspace(-2.0, 2.0, 5))
