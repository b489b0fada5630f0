// A block on the canvas: a card with its category's glyph and colour, its
// id, type and key parameter (face.js), and each port's handle with the
// port's name (a Sum's sign) beside it, on the side the block's turn and
// mirror put it.
import { memo, useEffect } from 'react';
import { Handle, Position, useUpdateNodeInternals } from '@xyflow/react';
import { categoryOf } from './categories.js';
import { faceOf, inputLabel } from './face.js';
import { blockSize, portPlaces } from './geometry.js';

const SIDES = { left: Position.Left, right: Position.Right, top: Position.Top, bottom: Position.Bottom };

function BlockNodeView({ id, data, selected }) {
  const { block, ports, error } = data;
  const places = portPlaces(block, ports);
  const size = blockSize(block, ports);
  const category = categoryOf(block.type);
  const face = faceOf(block);
  const inputs = ports?.inputs ?? [];
  // Handles move with the ports and the turn: React Flow measures them again.
  const updateNodeInternals = useUpdateNodeInternals();
  const shape = places.map((p) => `${p.kind}${p.name}${p.side}${p.at}`).join('|');
  useEffect(() => updateNodeInternals(id), [id, shape, size.width, size.height, updateNodeInternals]);
  const classes = ['block', `cat-${category.color}`];
  if (error) classes.push('block-error');
  if (selected) classes.push('block-selected');
  return (
    <div
      className={classes.join(' ')}
      style={{ width: size.width, height: size.height }}
      data-testid={`block-${block.id}`}
      data-error={error ? error.message : undefined}
      title={error ? error.message : undefined}
    >
      <div className="block-body">
        <span className="block-glyph" aria-hidden="true">
          {category.glyph}
        </span>
        <span className="block-text">
          <span className="block-id">{block.id}</span>
          <span className="block-type">{block.type}</span>
          {face && (
            <span className="block-face" data-testid={`face-${block.id}`}>
              {face}
            </span>
          )}
        </span>
      </div>
      {error && (
        <div className="block-error-note" role="note">
          {error.message.replace(/^block `[^`]*`(, port `[^`]*`)?: /, '')}
        </div>
      )}
      {places.map((p) => {
        const along = `${p.at * 100}%`;
        const offset = p.side === 'left' || p.side === 'right' ? { top: along } : { left: along };
        const bad = p.kind === 'in' && error?.port === p.name;
        return (
          <div key={`${p.kind}:${p.name}`}>
            <Handle
              id={`${p.kind}:${p.name}`}
              type={p.kind === 'in' ? 'target' : 'source'}
              position={SIDES[p.side]}
              style={offset}
              className={bad ? `port port-${p.kind} port-error` : `port port-${p.kind}`}
              data-testid={`port-${block.id}-${p.kind}-${p.name}`}
              data-port-error={bad ? error.message : undefined}
              title={`${p.kind === 'in' ? 'input' : 'output'} ${p.name}`}
            />
            <span className={`port-label port-label-${p.side}`} style={offset} data-testid={`label-${block.id}-${p.kind}-${p.name}`}>
              {p.kind === 'in' ? inputLabel(block, p.name, inputs.indexOf(p.name)) : p.name}
            </span>
          </div>
        );
      })}
    </div>
  );
}

/** The block node type. */
export const BlockNode = memo(BlockNodeView);
